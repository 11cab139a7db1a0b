-- WITH … INSERT OVERWRITE DIRECTORY: the CTE wraps the write; the directory is still the output.
CREATE TABLE src (id INT, name STRING) USING parquet LOCATION '{root}/data/src';
INSERT INTO src VALUES (1, 'a');
WITH recent AS (SELECT id, name FROM src WHERE id > 0)
INSERT OVERWRITE DIRECTORY '{root}/export/recent' USING csv SELECT * FROM recent;
