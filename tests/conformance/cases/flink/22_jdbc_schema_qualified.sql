-- needs: postgres
-- table-name with its schema, read and written.
CREATE TABLE pg_orders (id INT, customer_id INT, amount DOUBLE) WITH ('connector' = 'jdbc', 'url' = '{pg}', 'table-name' = 'shop.orders', 'username' = '{pg_user}', 'password' = '{pg_password}');
CREATE TABLE pg_big (id INT, customer_id INT, amount DOUBLE) WITH ('connector' = 'jdbc', 'url' = '{pg}', 'table-name' = 'shop.big_orders', 'username' = '{pg_user}', 'password' = '{pg_password}');
INSERT INTO pg_big SELECT id, customer_id, amount FROM pg_orders WHERE amount > 10;
