package io.planlineage.standin;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.flink.table.catalog.Column;
import org.apache.flink.table.catalog.ResolvedSchema;
import org.apache.flink.table.connector.ChangelogMode;
import org.apache.flink.table.connector.sink.DynamicTableSink;
import org.apache.flink.table.connector.sink.abilities.SupportsOverwrite;
import org.apache.flink.table.connector.sink.abilities.SupportsPartitioning;
import org.apache.flink.table.connector.sink.abilities.SupportsWritingMetadata;
import org.apache.flink.table.types.DataType;

/** A sink that accepts every changelog, overwrite, static partitions and metadata columns. */
final class StandInSink
        implements DynamicTableSink, SupportsWritingMetadata, SupportsOverwrite, SupportsPartitioning {

    private final ResolvedSchema schema;

    StandInSink(ResolvedSchema schema) {
        this.schema = schema;
    }

    @Override
    public ChangelogMode getChangelogMode(ChangelogMode requestedMode) {
        return requestedMode;
    }

    @Override
    public SinkRuntimeProvider getSinkRuntimeProvider(Context context) {
        return new SinkRuntimeProvider() {};
    }

    @Override
    public Map<String, DataType> listWritableMetadata() {
        Map<String, DataType> keys = new LinkedHashMap<>();
        for (Column column : schema.getColumns()) {
            if (column instanceof Column.MetadataColumn && !((Column.MetadataColumn) column).isVirtual()) {
                Column.MetadataColumn metadata = (Column.MetadataColumn) column;
                keys.put(metadata.getMetadataKey().orElse(metadata.getName()), metadata.getDataType());
            }
        }
        return keys;
    }

    @Override
    public void applyWritableMetadata(List<String> metadataKeys, DataType consumedDataType) {}

    @Override
    public void applyOverwrite(boolean overwrite) {}

    @Override
    public void applyStaticPartition(Map<String, String> partition) {}

    @Override
    public DynamicTableSink copy() {
        return new StandInSink(schema);
    }

    @Override
    public String asSummaryString() {
        return StandInTableFactory.IDENTIFIER;
    }
}
