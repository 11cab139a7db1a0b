-- needs: postgres
-- A JDBC table read through a temporary view, written to files.
CREATE TEMPORARY VIEW pg_customers USING jdbc OPTIONS (url '{pg}', dbtable 'public.customers', user '{pg_user}', password '{pg_password}');
CREATE TABLE customers_copy USING parquet LOCATION '{root}/data/customers_copy' AS SELECT * FROM pg_customers;
