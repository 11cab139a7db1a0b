-- A sink declared LIKE another table, its path overridden.
CREATE TABLE gen (id INT, name STRING) WITH ('connector' = 'datagen', 'number-of-rows' = '4');
CREATE TABLE base_out (id INT, name STRING) WITH ('connector' = 'filesystem', 'path' = 'file://{root}/data/base_out', 'format' = 'csv');
CREATE TABLE like_out WITH ('path' = 'file://{root}/data/like_out') LIKE base_out;
INSERT INTO like_out SELECT id, name FROM gen;
