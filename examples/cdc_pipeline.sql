-- MySQL binlog (CDC) to an upsert Kafka topic, aggregated per customer.
CREATE TABLE shop_orders (
  id          BIGINT,
  customer_id BIGINT,
  amount      DECIMAL(10, 2),
  PRIMARY KEY (id) NOT ENFORCED
) WITH (
  'connector' = 'mysql-cdc',
  'hostname' = 'MySQL.Prod',
  'port' = '3306',
  'username' = 'cdc',
  'password' = 'cdc-FAKE-secret',
  'database-name' = 'shop',
  'table-name' = 'orders'
);

CREATE TABLE customer_totals (
  customer_id BIGINT,
  total       DECIMAL(20, 2),
  orders      BIGINT,
  PRIMARY KEY (customer_id) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = 'customer-totals',
  'properties.bootstrap.servers' = 'kafka-1.prod:9092',
  'key.format' = 'json',
  'value.format' = 'json'
);

INSERT INTO customer_totals
SELECT customer_id, SUM(amount), COUNT(*) FROM shop_orders GROUP BY customer_id;
