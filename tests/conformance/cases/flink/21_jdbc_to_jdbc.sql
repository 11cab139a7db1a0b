-- needs: postgres
-- One PostgreSQL table copied into another through Flink.
CREATE TABLE pg_customers (id INT, name STRING) WITH ('connector' = 'jdbc', 'url' = '{pg}', 'table-name' = 'customers', 'username' = '{pg_user}', 'password' = '{pg_password}');
CREATE TABLE pg_archive (id INT, name STRING) WITH ('connector' = 'jdbc', 'url' = '{pg}', 'table-name' = 'customers_archive', 'username' = '{pg_user}', 'password' = '{pg_password}');
INSERT INTO pg_archive SELECT id, name FROM pg_customers;
