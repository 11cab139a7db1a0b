-- Files filled by one job, read by the next and written as JSON to another path.
CREATE TABLE gen (id INT, name STRING) WITH ('connector' = 'datagen', 'number-of-rows' = '5');
CREATE TABLE src (id INT, name STRING) WITH ('connector' = 'filesystem', 'path' = 'file://{root}/data/src', 'format' = 'csv');
CREATE TABLE dst (id INT, name STRING) WITH ('connector' = 'filesystem', 'path' = 'file://{root}/data/dst', 'format' = 'json');
INSERT INTO src SELECT id, name FROM gen;
INSERT INTO dst SELECT id, upper(name) FROM src;
