package io.planlineage.standin;

import java.util.Arrays;
import java.util.HashSet;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import org.apache.flink.table.catalog.ResolvedSchema;
import org.apache.flink.table.connector.ChangelogMode;
import org.apache.flink.types.RowKind;

/**
 * The changes a stood-in sink accepts, as the real connector accepts them: a Kafka or filesystem
 * sink writes what its format encodes (JSON, CSV, Avro, Parquet... only inserts; the CDC formats
 * every change), upsert-kafka upserts, JDBC upserts and refuses updates without a primary key,
 * with its own message. A query whose changes the real sink refuses is refused by the planner with
 * the real connector's jar, so the stand-in refuses it too: planlineage then reports what the
 * platform will report, a job that does not start. Any other connector, and a format not listed,
 * accept every change (as before): the stand-in never refuses a job for a connector it does not
 * know. A batch job's sinks accept every change (StandInSink).
 */
final class SinkChangelog {
    private SinkChangelog() {}

    /** Formats whose encoder writes inserts only (`SerializationFormatFactory`/`BulkWriterFormatFactory`). */
    private static final Set<String> INSERT_ONLY_FORMATS = new HashSet<>(Arrays.asList(
            "json", "csv", "avro", "avro-confluent", "parquet", "orc", "raw", "protobuf"));
    /** Formats whose encoder writes every change. */
    private static final Set<String> CHANGELOG_FORMATS = new HashSet<>(Arrays.asList(
            "debezium-json", "canal-json", "maxwell-json", "ogg-json", "debezium-avro-confluent"));

    static ChangelogMode accepted(ResolvedSchema schema, Map<String, String> options, ChangelogMode requested) {
        String connector = options.getOrDefault(StandInTableFactory.ORIGINAL_CONNECTOR, "").toLowerCase(Locale.ROOT);
        switch (connector) {
            case "kafka":
                return byFormat(options.getOrDefault("value.format", options.get("format")), requested);
            case "filesystem":
                return byFormat(options.get("format"), requested);
            case "upsert-kafka":
                return upsert();
            case "jdbc":
                // JdbcDynamicTableSink.validatePrimaryKey, with its message: it says what to fix.
                if (!requested.equals(ChangelogMode.insertOnly()) && !schema.getPrimaryKey().isPresent()) {
                    throw new IllegalStateException(
                            "please declare primary key for sink table when query contains update/delete record.");
                }
                return upsert();
            default:
                return requested;
        }
    }

    private static ChangelogMode byFormat(String format, ChangelogMode requested) {
        String name = format == null ? "" : format.toLowerCase(Locale.ROOT);
        if (INSERT_ONLY_FORMATS.contains(name)) {
            return ChangelogMode.insertOnly();
        }
        if (CHANGELOG_FORMATS.contains(name)) {
            return ChangelogMode.all();
        }
        return requested;
    }

    /** INSERT, UPDATE_AFTER and DELETE: what upsert-kafka's and JDBC's sinks declare. */
    private static ChangelogMode upsert() {
        return ChangelogMode.newBuilder()
                .addContainedKind(RowKind.INSERT)
                .addContainedKind(RowKind.UPDATE_AFTER)
                .addContainedKind(RowKind.DELETE)
                .build();
    }
}
