package io.planlineage.standin;

import java.util.List;
import java.util.Map;

import org.apache.flink.table.catalog.ResolvedSchema;
import org.apache.flink.table.connector.ChangelogMode;
import org.apache.flink.table.connector.sink.DynamicTableSink;
import org.apache.flink.table.connector.sink.abilities.SupportsOverwrite;
import org.apache.flink.table.connector.sink.abilities.SupportsPartitioning;
import org.apache.flink.table.connector.sink.abilities.SupportsWritingMetadata;
import org.apache.flink.table.types.DataType;

/**
 * A sink that accepts the changes the real connector accepts (SinkChangelog), overwrite, static
 * partitions and metadata columns (typed as the real connector types them: ConnectorMetadata).
 */
final class StandInSink
        implements DynamicTableSink, SupportsWritingMetadata, SupportsOverwrite, SupportsPartitioning {

    private final ResolvedSchema schema;
    private final Map<String, String> options;
    private final boolean batch;

    StandInSink(ResolvedSchema schema, Map<String, String> options, boolean batch) {
        this.schema = schema;
        this.options = options;
        this.batch = batch;
    }

    @Override
    public ChangelogMode getChangelogMode(ChangelogMode requestedMode) {
        // A batch job's aggregates end once, with inserts; planned in streaming mode (a version
        // without batch CompiledPlans) they would be updates the real sink never sees.
        return batch ? requestedMode : SinkChangelog.accepted(schema, options, requestedMode);
    }

    @Override
    public SinkRuntimeProvider getSinkRuntimeProvider(Context context) {
        return new SinkRuntimeProvider() {};
    }

    @Override
    public Map<String, DataType> listWritableMetadata() {
        return ConnectorMetadata.writable(schema, options);
    }

    @Override
    public void applyWritableMetadata(List<String> metadataKeys, DataType consumedDataType) {}

    @Override
    public void applyOverwrite(boolean overwrite) {}

    @Override
    public void applyStaticPartition(Map<String, String> partition) {}

    @Override
    public DynamicTableSink copy() {
        return new StandInSink(schema, options, batch);
    }

    @Override
    public String asSummaryString() {
        return StandInTableFactory.IDENTIFIER;
    }
}
