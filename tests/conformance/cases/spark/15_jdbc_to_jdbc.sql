-- needs: postgres
-- JDBC to JDBC: both datasets named by the database's address and table.
CREATE TEMPORARY VIEW pg_src USING jdbc OPTIONS (url '{pg}', dbtable 'customers', user '{pg_user}', password '{pg_password}');
CREATE TEMPORARY VIEW pg_dst USING jdbc OPTIONS (url '{pg}', dbtable 'public.customers_archive', user '{pg_user}', password '{pg_password}');
INSERT INTO pg_dst SELECT id, name FROM pg_src;
