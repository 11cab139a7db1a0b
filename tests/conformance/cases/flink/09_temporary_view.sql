-- A temporary view between a generator and a file sink.
CREATE TABLE gen (id INT, name STRING) WITH ('connector' = 'datagen', 'number-of-rows' = '4');
CREATE TEMPORARY VIEW positive AS SELECT id, name FROM gen WHERE id > 0;
CREATE TABLE kept (id INT, name STRING) WITH ('connector' = 'filesystem', 'path' = 'file://{root}/data/kept', 'format' = 'csv');
INSERT INTO kept SELECT * FROM positive;
