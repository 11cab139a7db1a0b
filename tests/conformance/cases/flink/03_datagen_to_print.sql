-- A print sink: no storage behind it.
CREATE TABLE gen (id INT, name STRING) WITH ('connector' = 'datagen', 'number-of-rows' = '3');
CREATE TABLE shown (id INT, name STRING) WITH ('connector' = 'print');
INSERT INTO shown SELECT id, name FROM gen;
