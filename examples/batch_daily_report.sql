-- A nightly batch job: sales per country from the lake into a ClickHouse report table.
SET 'execution.runtime-mode' = 'batch';

CREATE TABLE sales (country STRING, amount DOUBLE, dt STRING)
PARTITIONED BY (dt)
WITH ('connector' = 'filesystem', 'path' = 's3://lake/sales', 'format' = 'parquet');

CREATE TABLE countries (code STRING, name STRING)
WITH ('connector' = 'jdbc', 'url' = 'jdbc:postgresql://ref.prod/reference', 'table-name' = 'public.countries');

CREATE TABLE daily_report (country STRING, total DOUBLE, PRIMARY KEY (country) NOT ENFORCED)
WITH ('connector' = 'jdbc', 'url' = 'jdbc:clickhouse://ch.prod:8123/reports', 'table-name' = 'daily_sales');

INSERT INTO daily_report
SELECT c.name, SUM(s.amount)
FROM sales AS s JOIN countries AS c ON s.country = c.code
WHERE s.dt = '2026-11-29'
GROUP BY c.name;
