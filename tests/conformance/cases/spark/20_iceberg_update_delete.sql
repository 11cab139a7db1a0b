-- UPDATE and DELETE on an Iceberg table, one with a subquery over another table.
-- conf: spark.sql.extensions = org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions
-- conf: spark.sql.catalog.lake = org.apache.iceberg.spark.SparkCatalog
-- conf: spark.sql.catalog.lake.type = hadoop
-- conf: spark.sql.catalog.lake.warehouse = {root}/lake
CREATE NAMESPACE IF NOT EXISTS lake.db;
CREATE TABLE lake.db.orders (id INT, status STRING) USING iceberg;
CREATE TABLE cancelled (id INT) USING parquet LOCATION '{root}/data/cancelled';
INSERT INTO lake.db.orders VALUES (1, 'open'), (2, 'open'), (3, 'done');
INSERT INTO cancelled VALUES (2);
UPDATE lake.db.orders SET status = 'cancelled' WHERE id IN (SELECT id FROM cancelled);
DELETE FROM lake.db.orders WHERE status = 'done';
