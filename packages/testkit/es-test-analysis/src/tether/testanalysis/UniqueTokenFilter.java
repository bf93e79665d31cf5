package tether.testanalysis;

import java.io.IOException;
import java.util.Arrays;
import org.apache.lucene.analysis.CharArraySet;
import org.apache.lucene.analysis.TokenFilter;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;

/** Drops each token whose term the stream has already produced (Elasticsearch's `unique` filter). */
final class UniqueTokenFilter extends TokenFilter {
    private final CharTermAttribute term = addAttribute(CharTermAttribute.class);
    private final CharArraySet seen = new CharArraySet(8, false);

    UniqueTokenFilter(TokenStream input) {
        super(input);
    }

    @Override
    public boolean incrementToken() throws IOException {
        while (input.incrementToken()) {
            if (seen.contains(term.buffer(), 0, term.length())) continue;
            seen.add(Arrays.copyOf(term.buffer(), term.length()));
            return true;
        }
        return false;
    }

    @Override
    public void reset() throws IOException {
        super.reset();
        seen.clear();
    }
}
