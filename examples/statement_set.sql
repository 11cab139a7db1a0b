-- One job, two independent pipelines: each sink has only its own inputs.
CREATE TABLE clicks (user_id BIGINT, url STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)
WITH ('connector' = 'kafka', 'topic' = 'clicks', 'properties.bootstrap.servers' = 'kafka-1.prod:9092', 'format' = 'json');

CREATE TABLE payments (user_id BIGINT, amount DOUBLE)
WITH ('connector' = 'kafka', 'topic' = 'payments', 'properties.bootstrap.servers' = 'kafka-1.prod:9092', 'format' = 'json');

CREATE TABLE click_counts (window_start TIMESTAMP(3), window_end TIMESTAMP(3), clicks BIGINT)
WITH ('connector' = 'filesystem', 'path' = 's3a://lake/clicks/counts/', 'format' = 'parquet');

CREATE TABLE payment_archive (user_id BIGINT, amount DOUBLE)
WITH ('connector' = 'filesystem', 'path' = 'hdfs://namenode:8020/archive/payments', 'format' = 'csv');

EXECUTE STATEMENT SET
BEGIN
  INSERT INTO click_counts
  SELECT window_start, window_end, COUNT(*)
  FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '1' MINUTE))
  GROUP BY window_start, window_end;

  INSERT INTO payment_archive SELECT user_id, amount FROM payments;
END;
