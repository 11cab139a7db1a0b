-- A multi-insert after WITH, one INSERT into a table and one into a directory.
CREATE TABLE src (id INT, name STRING) USING parquet LOCATION '{root}/data/src';
CREATE TABLE ids (id INT) USING parquet LOCATION '{root}/data/ids';
INSERT INTO src VALUES (1, 'a');
WITH kept AS (SELECT id, name FROM src WHERE id > 0)
FROM kept INSERT INTO ids SELECT id INSERT OVERWRITE DIRECTORY '{root}/export/names' USING json SELECT name;
