-- A filesystem path written without a scheme.
CREATE TABLE gen (id INT, name STRING) WITH ('connector' = 'datagen', 'number-of-rows' = '5');
CREATE TABLE plain (id INT, name STRING) WITH ('connector' = 'filesystem', 'path' = '{root}/data/plain', 'format' = 'json');
INSERT INTO plain SELECT id, name FROM gen;
