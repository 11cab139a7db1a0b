-- MERGE INTO an Iceberg table from a parquet table at a path, deleting the matches.
-- conf: spark.sql.extensions = org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions
-- conf: spark.sql.catalog.lake = org.apache.iceberg.spark.SparkCatalog
-- conf: spark.sql.catalog.lake.type = hadoop
-- conf: spark.sql.catalog.lake.warehouse = {root}/lake
CREATE NAMESPACE IF NOT EXISTS lake.db;
CREATE TABLE lake.db.accounts (id INT, owner STRING) USING iceberg;
CREATE TABLE closed (id INT, owner STRING) USING parquet LOCATION '{root}/data/closed';
INSERT INTO lake.db.accounts VALUES (1, 'ann'), (2, 'bob');
INSERT INTO closed VALUES (2, 'bob'), (3, 'cy');
MERGE INTO lake.db.accounts a USING closed c ON a.id = c.id
WHEN MATCHED THEN DELETE
WHEN NOT MATCHED THEN INSERT (id, owner) VALUES (c.id, c.owner);
