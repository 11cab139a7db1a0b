-- Generated rows written to CSV files at a path.
CREATE TABLE gen (id INT, name STRING) WITH ('connector' = 'datagen', 'number-of-rows' = '5');
CREATE TABLE out_csv (id INT, name STRING) WITH ('connector' = 'filesystem', 'path' = 'file://{root}/data/out_csv', 'format' = 'csv');
INSERT INTO out_csv SELECT id, name FROM gen;
