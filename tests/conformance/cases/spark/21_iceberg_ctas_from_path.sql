-- CREATE TABLE AS SELECT into an Iceberg catalog from files.
-- conf: spark.sql.extensions = org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions
-- conf: spark.sql.catalog.lake = org.apache.iceberg.spark.SparkCatalog
-- conf: spark.sql.catalog.lake.type = hadoop
-- conf: spark.sql.catalog.lake.warehouse = {root}/lake
CREATE NAMESPACE IF NOT EXISTS lake.db;
CREATE TABLE events (id INT, kind STRING) USING parquet LOCATION '{root}/data/events';
INSERT INTO events VALUES (1, 'click'), (2, 'view');
CREATE TABLE lake.db.clicks USING iceberg AS SELECT id FROM events WHERE kind = 'click';
