-- INSERT INTO one path table from another, both declared with LOCATION.
CREATE TABLE events (id INT, kind STRING) USING parquet LOCATION '{root}/data/events';
CREATE TABLE kinds (kind STRING, n BIGINT) USING parquet LOCATION '{root}/data/kinds';
INSERT INTO events VALUES (1, 'click'), (2, 'view');
INSERT INTO kinds SELECT kind, count(*) FROM events GROUP BY kind;
