-- A query over a file path (format.`path`) into a managed table.
CREATE TABLE seed (id INT, city STRING) USING csv LOCATION '{root}/data/seed';
INSERT INTO seed VALUES (1, 'Oslo'), (2, 'Lima');
CREATE TABLE cities USING parquet AS SELECT _c1 AS city FROM csv.`{root}/data/seed`;
