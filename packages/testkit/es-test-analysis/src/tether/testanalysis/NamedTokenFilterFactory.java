package tether.testanalysis;

import java.util.function.UnaryOperator;
import org.apache.lucene.analysis.TokenStream;
import org.elasticsearch.index.analysis.TokenFilterFactory;

/** A token filter factory that wraps the stream with one function. */
final class NamedTokenFilterFactory implements TokenFilterFactory {
    private final String name;
    private final UnaryOperator<TokenStream> wrap;

    NamedTokenFilterFactory(String name, UnaryOperator<TokenStream> wrap) {
        this.name = name;
        this.wrap = wrap;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public TokenStream create(TokenStream tokenStream) {
        return wrap.apply(tokenStream);
    }
}
