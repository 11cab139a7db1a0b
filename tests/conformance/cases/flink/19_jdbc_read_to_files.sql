-- needs: postgres
-- A PostgreSQL table read by the JDBC connector (a bounded scan), written to files.
CREATE TABLE pg_customers (id INT, name STRING) WITH ('connector' = 'jdbc', 'url' = '{pg}', 'table-name' = 'customers', 'username' = '{pg_user}', 'password' = '{pg_password}');
CREATE TABLE customers_copy (id INT, name STRING) WITH ('connector' = 'filesystem', 'path' = 'file://{root}/data/customers_copy', 'format' = 'csv');
INSERT INTO customers_copy SELECT id, name FROM pg_customers;
