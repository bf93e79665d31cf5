package tether.testanalysis;

import java.util.Map;
import java.util.regex.Pattern;
import org.apache.lucene.analysis.LowerCaseFilter;
import org.apache.lucene.analysis.email.UAX29URLEmailTokenizer;
import org.apache.lucene.analysis.pattern.PatternCaptureGroupTokenFilter;
import org.apache.lucene.analysis.standard.StandardAnalyzer;
import org.elasticsearch.index.analysis.TokenFilterFactory;
import org.elasticsearch.index.analysis.TokenizerFactory;
import org.elasticsearch.indices.analysis.AnalysisModule.AnalysisProvider;
import org.elasticsearch.plugins.AnalysisPlugin;
import org.elasticsearch.plugins.Plugin;

/**
 * The analysis components the `.security` index's `email` analyzer names (tokenizer
 * `uax_url_email`; filters `pattern_capture`, `lowercase`, `unique`). They live in the
 * analysis-common module, which the integ-test distribution leaves out; without them the node
 * cannot create its security index, and so issues no API keys or tokens.
 */
public final class TestAnalysisPlugin extends Plugin implements AnalysisPlugin {
    @Override
    public Map<String, AnalysisProvider<TokenFilterFactory>> getTokenFilters() {
        return Map.of(
            "pattern_capture",
            (indexSettings, env, name, settings) -> {
                Pattern[] patterns = settings.getAsList("patterns").stream().map(Pattern::compile).toArray(Pattern[]::new);
                boolean preserveOriginal = settings.getAsBoolean("preserve_original", true);
                return new NamedTokenFilterFactory(name, in -> new PatternCaptureGroupTokenFilter(in, preserveOriginal, patterns));
            },
            "lowercase",
            (indexSettings, env, name, settings) -> new NamedTokenFilterFactory(name, LowerCaseFilter::new),
            "unique",
            (indexSettings, env, name, settings) -> new NamedTokenFilterFactory(name, UniqueTokenFilter::new)
        );
    }

    @Override
    public Map<String, AnalysisProvider<TokenizerFactory>> getTokenizers() {
        return Map.of("uax_url_email", (indexSettings, env, name, settings) -> {
            int maxTokenLength = settings.getAsInt("max_token_length", StandardAnalyzer.DEFAULT_MAX_TOKEN_LENGTH);
            return TokenizerFactory.newFactory(name, () -> {
                UAX29URLEmailTokenizer tokenizer = new UAX29URLEmailTokenizer();
                tokenizer.setMaxTokenLength(maxTokenLength);
                return tokenizer;
            });
        });
    }
}
