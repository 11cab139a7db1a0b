-- A query over a JSON directory and a parquet path in one join.
CREATE TABLE dim (id INT, label STRING) USING json LOCATION '{root}/data/dim';
CREATE TABLE fact (id INT, v INT) USING parquet LOCATION '{root}/data/fact';
CREATE TABLE out (label STRING, v INT) USING parquet LOCATION '{root}/data/out';
INSERT INTO dim VALUES (1, 'one');
INSERT INTO fact VALUES (1, 42);
INSERT INTO out SELECT d.label, f.v FROM parquet.`{root}/data/fact` f JOIN json.`{root}/data/dim` d ON f.id = d.id;
