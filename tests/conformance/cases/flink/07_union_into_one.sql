-- Two generated streams united into one file table.
CREATE TABLE gen_a (id INT, name STRING) WITH ('connector' = 'datagen', 'number-of-rows' = '3');
CREATE TABLE gen_b (id INT, name STRING) WITH ('connector' = 'datagen', 'number-of-rows' = '3');
CREATE TABLE together (id INT, name STRING) WITH ('connector' = 'filesystem', 'path' = 'file://{root}/data/together', 'format' = 'csv');
INSERT INTO together SELECT id, name FROM gen_a UNION ALL SELECT id, name FROM gen_b;
