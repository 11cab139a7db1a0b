-- MERGE whose source is a query joining two tables: both are inputs of the target.
-- conf: spark.sql.extensions = org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions
-- conf: spark.sql.catalog.lake = org.apache.iceberg.spark.SparkCatalog
-- conf: spark.sql.catalog.lake.type = hadoop
-- conf: spark.sql.catalog.lake.warehouse = {root}/lake
CREATE NAMESPACE IF NOT EXISTS lake.db;
CREATE TABLE lake.db.balances (id INT, amount INT) USING iceberg;
CREATE TABLE lake.db.payments (id INT, account INT, amount INT) USING iceberg;
CREATE TABLE rates (account INT, factor INT) USING parquet LOCATION '{root}/data/rates';
INSERT INTO lake.db.balances VALUES (1, 10);
INSERT INTO lake.db.payments VALUES (1, 1, 5), (2, 2, 7);
INSERT INTO rates VALUES (1, 2), (2, 3);
MERGE INTO lake.db.balances b
USING (SELECT p.account AS id, SUM(p.amount * r.factor) AS amount
       FROM lake.db.payments p JOIN rates r ON p.account = r.account GROUP BY p.account) s
ON b.id = s.id
WHEN MATCHED THEN UPDATE SET amount = b.amount + s.amount
WHEN NOT MATCHED THEN INSERT *;
