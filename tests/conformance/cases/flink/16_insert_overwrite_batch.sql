-- INSERT OVERWRITE of a file table in batch mode.
SET 'execution.runtime-mode' = 'batch';
CREATE TABLE gen (id INT, name STRING) WITH ('connector' = 'datagen', 'number-of-rows' = '4');
CREATE TABLE replaced (id INT, name STRING) WITH ('connector' = 'filesystem', 'path' = 'file://{root}/data/replaced', 'format' = 'csv');
INSERT OVERWRITE replaced SELECT id, name FROM gen;
