-- Orders from Kafka, enriched with the customer row looked up in MySQL, written to Postgres.
SET 'pipeline.name' = 'orders-enrichment';
SET 'table.exec.state.ttl' = '1 h';

CREATE TABLE orders (
  order_id    BIGINT,
  customer_id BIGINT,
  amount      DECIMAL(10, 2),
  event_time  TIMESTAMP(3) METADATA FROM 'timestamp',
  proc_time   AS PROCTIME(),
  WATERMARK FOR event_time AS event_time - INTERVAL '5' SECOND
) WITH (
  'connector' = 'kafka',
  'topic' = 'orders',
  'properties.bootstrap.servers' = 'kafka-1.prod:9092,kafka-2.prod:9092',
  'properties.group.id' = 'enrichment',
  'properties.sasl.jaas.config' = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="svc" password="kafka-FAKE-secret";',
  'scan.startup.mode' = 'latest-offset',
  'format' = 'json'
);

CREATE TEMPORARY TABLE customers (
  customer_id BIGINT,
  name        STRING,
  country     STRING,
  PRIMARY KEY (customer_id) NOT ENFORCED
) WITH (
  'connector' = 'jdbc',
  'url' = 'jdbc:mysql://mysql.prod:3306/crm',
  'table-name' = 'customers',
  'username' = 'flink',
  'password' = 'mysql-FAKE-secret',
  'lookup.cache' = 'PARTIAL'
);

CREATE TABLE enriched_orders (
  order_id    BIGINT,
  customer    STRING,
  country     STRING,
  amount      DECIMAL(10, 2)
) WITH (
  'connector' = 'jdbc',
  'url' = 'jdbc:postgresql://warehouse.prod:5432/analytics',
  'table-name' = 'sales.enriched_orders',
  'username' = 'flink',
  'password' = 'pg-FAKE-secret'
);

INSERT INTO enriched_orders
SELECT o.order_id, c.name, c.country, o.amount
FROM orders AS o
JOIN customers FOR SYSTEM_TIME AS OF o.proc_time AS c
  ON o.customer_id = c.customer_id;
