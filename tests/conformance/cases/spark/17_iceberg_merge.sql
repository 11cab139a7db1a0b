-- MERGE INTO an Iceberg table from another: the target is read as well as written.
-- conf: spark.sql.extensions = org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions
-- conf: spark.sql.catalog.lake = org.apache.iceberg.spark.SparkCatalog
-- conf: spark.sql.catalog.lake.type = hadoop
-- conf: spark.sql.catalog.lake.warehouse = {root}/lake
CREATE NAMESPACE IF NOT EXISTS lake.db;
CREATE TABLE lake.db.customers (id INT, name STRING) USING iceberg;
CREATE TABLE lake.db.updates (id INT, name STRING) USING iceberg;
INSERT INTO lake.db.customers VALUES (1, 'ann');
INSERT INTO lake.db.updates VALUES (1, 'anne'), (2, 'bob');
MERGE INTO lake.db.customers t USING lake.db.updates u ON t.id = u.id
WHEN MATCHED THEN UPDATE SET name = u.name
WHEN NOT MATCHED THEN INSERT *;
