-- UNION ALL of two sources into one sink.
CREATE TABLE a (id INT) USING parquet LOCATION '{root}/data/a';
CREATE TABLE b (id INT) USING parquet LOCATION '{root}/data/b';
CREATE TABLE ab (id INT) USING parquet LOCATION '{root}/data/ab';
INSERT INTO a VALUES (1);
INSERT INTO b VALUES (2);
INSERT INTO ab SELECT id FROM a UNION ALL SELECT id FROM b;
