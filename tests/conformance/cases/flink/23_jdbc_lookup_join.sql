-- needs: postgres
-- Generated orders enriched by a lookup into a PostgreSQL table, written to files.
CREATE TABLE gen (customer_id INT, amount DOUBLE, pt AS PROCTIME()) WITH ('connector' = 'datagen', 'number-of-rows' = '3', 'fields.customer_id.min' = '1', 'fields.customer_id.max' = '2');
CREATE TABLE pg_customers (id INT, name STRING) WITH ('connector' = 'jdbc', 'url' = '{pg}', 'table-name' = 'customers', 'username' = '{pg_user}', 'password' = '{pg_password}');
CREATE TABLE enriched (name STRING, amount DOUBLE) WITH ('connector' = 'filesystem', 'path' = 'file://{root}/data/enriched', 'format' = 'csv');
INSERT INTO enriched SELECT c.name, g.amount FROM gen AS g JOIN pg_customers FOR SYSTEM_TIME AS OF g.pt AS c ON g.customer_id = c.id;
