-- needs: postgres
-- Files written into a JDBC table through a temporary view.
CREATE TABLE new_customers (id INT, name STRING) USING parquet LOCATION '{root}/data/new_customers';
INSERT INTO new_customers VALUES (10, 'zed');
CREATE TEMPORARY VIEW pg_target USING jdbc OPTIONS (url '{pg}', dbtable 'public.customers_archive', user '{pg_user}', password '{pg_password}');
INSERT INTO pg_target SELECT id, name FROM new_customers;
