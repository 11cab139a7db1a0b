-- A temporary view over files (USING ... OPTIONS (path ...)) read into a table.
CREATE TABLE raw (id INT, v STRING) USING parquet LOCATION '{root}/data/raw';
INSERT INTO raw VALUES (1, 'x');
CREATE TEMPORARY VIEW raw_files USING parquet OPTIONS (path '{root}/data/raw');
CREATE TABLE clean USING parquet LOCATION '{root}/data/clean' AS SELECT id, trim(v) AS v FROM raw_files;
