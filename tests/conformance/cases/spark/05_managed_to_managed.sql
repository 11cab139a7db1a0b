-- Managed tables only: both named by the warehouse location.
CREATE TABLE orders (id INT, amount DOUBLE) USING parquet;
CREATE TABLE totals (n BIGINT, amount DOUBLE) USING parquet;
INSERT INTO orders VALUES (1, 9.5), (2, 3.0);
INSERT INTO totals SELECT count(*), sum(amount) FROM orders;
