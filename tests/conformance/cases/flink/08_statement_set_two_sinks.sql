-- One statement set, one job, two file sinks.
CREATE TABLE gen (id INT, name STRING) WITH ('connector' = 'datagen', 'number-of-rows' = '4');
CREATE TABLE even_rows (id INT, name STRING) WITH ('connector' = 'filesystem', 'path' = 'file://{root}/data/even', 'format' = 'csv');
CREATE TABLE odd_rows (id INT, name STRING) WITH ('connector' = 'filesystem', 'path' = 'file://{root}/data/odd', 'format' = 'csv');
EXECUTE STATEMENT SET BEGIN
INSERT INTO even_rows SELECT id, name FROM gen WHERE MOD(id, 2) = 0;
INSERT INTO odd_rows SELECT id, name FROM gen WHERE MOD(id, 2) <> 0;
END;
