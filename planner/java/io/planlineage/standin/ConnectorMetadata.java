package io.planlineage.standin;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.catalog.Column;
import org.apache.flink.table.catalog.ResolvedSchema;
import org.apache.flink.table.types.DataType;

/**
 * The metadata a stood-in connector offers, with the real connector's types: the planner casts a
 * metadata column whose declared type differs from them (a Kafka `ts TIMESTAMP(3) METADATA FROM
 * 'timestamp'` is read from a TIMESTAMP_LTZ(3)), so the stand-in must declare the same types for
 * the plan, and the column lineage, to be the real connector's. Read from the real classes
 * (flink-sql-connector-kafka 5.0.0-2.2, flink-connector-files and flink-json of Flink 1.20:
 * `KafkaDynamicSource.ReadableMetadata`, `KafkaDynamicSink.WritableMetadata`,
 * `FileSystemTableSource.ReadableFileInfo`, the JSON CDC formats' `ReadableMetadata`). A key
 * without a known type keeps the type the column declares, as before: the stand-in never refuses
 * a job for a key it does not know.
 */
final class ConnectorMetadata {
    private ConnectorMetadata() {}

    private static final Map<String, DataType> KAFKA_READABLE = new HashMap<>();
    private static final Map<String, DataType> KAFKA_WRITABLE = new HashMap<>();
    private static final Map<String, DataType> FILES_READABLE = new HashMap<>();
    private static final Map<String, Map<String, DataType>> FORMAT_READABLE = new HashMap<>();

    static {
        KAFKA_READABLE.put("topic", DataTypes.STRING().notNull());
        KAFKA_READABLE.put("partition", DataTypes.INT().notNull());
        KAFKA_READABLE.put("headers", DataTypes.MAP(DataTypes.STRING().nullable(), DataTypes.BYTES().nullable()).notNull());
        KAFKA_READABLE.put("leader-epoch", DataTypes.INT().nullable());
        KAFKA_READABLE.put("offset", DataTypes.BIGINT().notNull());
        KAFKA_READABLE.put("timestamp", DataTypes.TIMESTAMP_WITH_LOCAL_TIME_ZONE(3).notNull());
        KAFKA_READABLE.put("timestamp-type", DataTypes.STRING().notNull());

        KAFKA_WRITABLE.put("topic", DataTypes.STRING().notNull());
        KAFKA_WRITABLE.put("headers", DataTypes.MAP(DataTypes.STRING().nullable(), DataTypes.BYTES().nullable()).nullable());
        KAFKA_WRITABLE.put("timestamp", DataTypes.TIMESTAMP_WITH_LOCAL_TIME_ZONE(3).nullable());

        FILES_READABLE.put("file.path", DataTypes.STRING().notNull());
        FILES_READABLE.put("file.name", DataTypes.STRING().notNull());
        FILES_READABLE.put("file.size", DataTypes.BIGINT().notNull());
        FILES_READABLE.put("file.modification-time", DataTypes.TIMESTAMP_WITH_LOCAL_TIME_ZONE(3).notNull());

        Map<String, DataType> debezium = new HashMap<>();
        debezium.put("schema", DataTypes.STRING().nullable());
        debezium.put("ingestion-timestamp", DataTypes.TIMESTAMP_WITH_LOCAL_TIME_ZONE(3).nullable());
        debezium.put("source.timestamp", DataTypes.TIMESTAMP_WITH_LOCAL_TIME_ZONE(3).nullable());
        debezium.put("source.database", DataTypes.STRING().nullable());
        debezium.put("source.schema", DataTypes.STRING().nullable());
        debezium.put("source.table", DataTypes.STRING().nullable());
        debezium.put("source.properties", DataTypes.MAP(DataTypes.STRING().nullable(), DataTypes.STRING().nullable()).nullable());
        FORMAT_READABLE.put("debezium-json", debezium);
        Map<String, DataType> canal = new HashMap<>();
        canal.put("database", DataTypes.STRING().nullable());
        canal.put("table", DataTypes.STRING().nullable());
        canal.put("sql-type", DataTypes.MAP(DataTypes.STRING().nullable(), DataTypes.INT().nullable()).nullable());
        canal.put("pk-names", DataTypes.ARRAY(DataTypes.STRING()).nullable());
        canal.put("ingestion-timestamp", DataTypes.TIMESTAMP_WITH_LOCAL_TIME_ZONE(3).nullable());
        canal.put("event-timestamp", DataTypes.TIMESTAMP_WITH_LOCAL_TIME_ZONE(3).nullable());
        FORMAT_READABLE.put("canal-json", canal);
        Map<String, DataType> maxwell = new HashMap<>();
        maxwell.put("database", DataTypes.STRING().nullable());
        maxwell.put("table", DataTypes.STRING().nullable());
        maxwell.put("primary-key-columns", DataTypes.ARRAY(DataTypes.STRING()).nullable());
        maxwell.put("ingestion-timestamp", DataTypes.TIMESTAMP_WITH_LOCAL_TIME_ZONE(3).nullable());
        FORMAT_READABLE.put("maxwell-json", maxwell);
        Map<String, DataType> ogg = new HashMap<>();
        ogg.put("table", DataTypes.STRING().nullable());
        ogg.put("primary-keys", DataTypes.ARRAY(DataTypes.STRING()).nullable());
        ogg.put("ingestion-timestamp", DataTypes.TIMESTAMP_WITH_LOCAL_TIME_ZONE(6).nullable());
        ogg.put("event-timestamp", DataTypes.TIMESTAMP_WITH_LOCAL_TIME_ZONE(6).nullable());
        FORMAT_READABLE.put("ogg-json", ogg);
    }

    /** The readable metadata of the table's metadata columns, by key. */
    static Map<String, DataType> readable(ResolvedSchema schema, Map<String, String> options) {
        return declared(schema, options, false);
    }

    /** The writable metadata of the table's persisted metadata columns, by key. */
    static Map<String, DataType> writable(ResolvedSchema schema, Map<String, String> options) {
        return declared(schema, options, true);
    }

    private static Map<String, DataType> declared(ResolvedSchema schema, Map<String, String> options, boolean write) {
        Map<String, DataType> keys = new LinkedHashMap<>();
        for (Column column : schema.getColumns()) {
            if (!(column instanceof Column.MetadataColumn)) {
                continue;
            }
            Column.MetadataColumn metadata = (Column.MetadataColumn) column;
            if (write && metadata.isVirtual()) {
                continue;
            }
            String key = metadata.getMetadataKey().orElse(metadata.getName());
            DataType known = known(options, key, write);
            keys.put(key, known != null ? known : metadata.getDataType());
        }
        return keys;
    }

    private static DataType known(Map<String, String> options, String key, boolean write) {
        String connector = options.getOrDefault(StandInTableFactory.ORIGINAL_CONNECTOR, "").toLowerCase(Locale.ROOT);
        switch (connector) {
            case "kafka":
            case "upsert-kafka":
                if (write) {
                    return KAFKA_WRITABLE.get(key);
                }
                if (key.startsWith("value.")) {
                    String format = options.getOrDefault("value.format", options.getOrDefault("format", ""));
                    return formatType(format, key.substring("value.".length()));
                }
                return KAFKA_READABLE.get(key);
            case "filesystem":
                if (write) {
                    return null;
                }
                DataType file = FILES_READABLE.get(key);
                return file != null ? file : formatType(options.getOrDefault("format", ""), key);
            default:
                return null;
        }
    }

    private static DataType formatType(String format, String key) {
        Map<String, DataType> types = FORMAT_READABLE.get(format.toLowerCase(Locale.ROOT));
        return types == null ? null : types.get(key);
    }
}
