-- A multi-insert: one FROM, two INSERTs. Spark runs each INSERT as its own command, so each
-- target is paired with what its own SELECT reads.
CREATE TABLE src (id INT, name STRING) USING parquet LOCATION '{root}/data/src';
CREATE TABLE ids (id INT) USING parquet LOCATION '{root}/data/ids';
CREATE TABLE names (name STRING) USING parquet LOCATION '{root}/data/names';
INSERT INTO src VALUES (1, 'a'), (2, 'b');
FROM src INSERT INTO ids SELECT id WHERE id > 1 INSERT INTO names SELECT upper(name);
