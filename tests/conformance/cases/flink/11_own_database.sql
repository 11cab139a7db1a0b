-- Tables in a database of their own, made current with USE.
CREATE DATABASE sales;
USE sales;
CREATE TABLE gen (id INT, name STRING) WITH ('connector' = 'datagen', 'number-of-rows' = '4');
CREATE TABLE orders_copy (id INT, name STRING) WITH ('connector' = 'filesystem', 'path' = 'file://{root}/data/orders_copy', 'format' = 'csv');
INSERT INTO orders_copy SELECT id, name FROM gen;
