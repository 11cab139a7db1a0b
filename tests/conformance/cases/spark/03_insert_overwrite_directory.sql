-- INSERT OVERWRITE DIRECTORY writes a path that is no table.
CREATE TABLE src (id INT, name STRING) USING parquet LOCATION '{root}/data/src';
INSERT INTO src VALUES (1, 'a');
INSERT OVERWRITE DIRECTORY '{root}/export/json' USING json SELECT * FROM src;
