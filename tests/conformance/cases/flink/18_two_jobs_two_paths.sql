-- Two separate INSERTs: two jobs, each with its own sink.
CREATE TABLE gen (id INT, name STRING) WITH ('connector' = 'datagen', 'number-of-rows' = '4');
CREATE TABLE first_out (id INT, name STRING) WITH ('connector' = 'filesystem', 'path' = 'file://{root}/data/first_out', 'format' = 'csv');
CREATE TABLE second_out (id INT) WITH ('connector' = 'filesystem', 'path' = 'file://{root}/data/second_out', 'format' = 'json');
INSERT INTO first_out SELECT id, name FROM gen;
INSERT INTO second_out SELECT id FROM gen;
