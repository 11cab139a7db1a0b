-- A managed table of a database other than default: <warehouse>/<db>.db/<table>.
CREATE DATABASE sales;
CREATE TABLE sales.orders (id INT, amount DOUBLE) USING parquet;
CREATE TABLE sales.big USING parquet AS SELECT * FROM sales.orders WHERE amount > 5;
INSERT INTO sales.orders VALUES (1, 9.5);
INSERT INTO sales.big SELECT * FROM sales.orders WHERE amount > 5;
