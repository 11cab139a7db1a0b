-- Temporary tables at paths.
CREATE TEMPORARY TABLE gen (id INT, name STRING) WITH ('connector' = 'datagen', 'number-of-rows' = '4');
CREATE TEMPORARY TABLE tmp_out (id INT, name STRING) WITH ('connector' = 'filesystem', 'path' = 'file://{root}/data/tmp_out', 'format' = 'json');
INSERT INTO tmp_out SELECT id, name FROM gen;
