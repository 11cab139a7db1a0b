-- Two file tables joined into a third (batch mode: the join of bounded inputs).
SET 'execution.runtime-mode' = 'batch';
CREATE TABLE gen (id INT, name STRING) WITH ('connector' = 'datagen', 'number-of-rows' = '5', 'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '5');
CREATE TABLE people (id INT, name STRING) WITH ('connector' = 'filesystem', 'path' = 'file://{root}/data/people', 'format' = 'csv');
CREATE TABLE scores (id INT, score INT) WITH ('connector' = 'filesystem', 'path' = 'file://{root}/data/scores', 'format' = 'csv');
CREATE TABLE joined (name STRING, score INT) WITH ('connector' = 'filesystem', 'path' = 'file://{root}/data/joined', 'format' = 'csv');
INSERT INTO people SELECT id, name FROM gen;
INSERT INTO scores SELECT id, id * 10 FROM gen;
INSERT INTO joined SELECT p.name, s.score FROM people p JOIN scores s ON p.id = s.id;
