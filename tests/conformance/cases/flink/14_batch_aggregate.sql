-- A GROUP BY in batch mode from files into files.
SET 'execution.runtime-mode' = 'batch';
CREATE TABLE gen (id INT, city STRING) WITH ('connector' = 'datagen', 'number-of-rows' = '10', 'fields.city.length' = '1');
CREATE TABLE visits (id INT, city STRING) WITH ('connector' = 'filesystem', 'path' = 'file://{root}/data/visits', 'format' = 'csv');
CREATE TABLE per_city (city STRING, n BIGINT) WITH ('connector' = 'filesystem', 'path' = 'file://{root}/data/per_city', 'format' = 'csv');
INSERT INTO visits SELECT id, city FROM gen;
INSERT INTO per_city SELECT city, COUNT(*) FROM visits GROUP BY city;
