-- needs: postgres
-- A file table and a PostgreSQL table joined into files (batch mode).
SET 'execution.runtime-mode' = 'batch';
CREATE TABLE gen (id INT, amount DOUBLE) WITH ('connector' = 'datagen', 'number-of-rows' = '4', 'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '4');
CREATE TABLE payments (id INT, amount DOUBLE) WITH ('connector' = 'filesystem', 'path' = 'file://{root}/data/payments', 'format' = 'csv');
CREATE TABLE pg_customers (id INT, name STRING) WITH ('connector' = 'jdbc', 'url' = '{pg}', 'table-name' = 'customers', 'username' = '{pg_user}', 'password' = '{pg_password}');
CREATE TABLE paid (name STRING, amount DOUBLE) WITH ('connector' = 'filesystem', 'path' = 'file://{root}/data/paid', 'format' = 'csv');
INSERT INTO payments SELECT id, amount FROM gen;
INSERT INTO paid SELECT c.name, p.amount FROM payments p JOIN pg_customers c ON p.id = c.id;
