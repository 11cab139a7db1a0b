-- needs: postgres
-- Generated rows appended to a PostgreSQL table.
CREATE TABLE gen (id INT, name STRING) WITH ('connector' = 'datagen', 'number-of-rows' = '3');
CREATE TABLE pg_archive (id INT, name STRING) WITH ('connector' = 'jdbc', 'url' = '{pg}', 'table-name' = 'customers_archive', 'username' = '{pg_user}', 'password' = '{pg_password}');
INSERT INTO pg_archive SELECT id, name FROM gen;
