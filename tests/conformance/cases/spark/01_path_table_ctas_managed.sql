-- A table at a path, filled, then a managed table created from it (CTAS into the warehouse).
CREATE TABLE src (id INT, name STRING) USING parquet LOCATION '{root}/data/src';
INSERT INTO src VALUES (1, 'a'), (2, 'b');
CREATE TABLE dst USING parquet AS SELECT id, upper(name) AS name FROM src;
