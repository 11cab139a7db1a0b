-- A blackhole sink: rows are dropped.
CREATE TABLE gen (id INT, amount DOUBLE) WITH ('connector' = 'datagen', 'number-of-rows' = '3');
CREATE TABLE dropped (id INT, amount DOUBLE) WITH ('connector' = 'blackhole');
INSERT INTO dropped SELECT id, amount * 2 FROM gen WHERE amount > 0;
