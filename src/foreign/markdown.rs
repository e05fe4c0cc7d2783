//! The Markdown escaper: foreign text quoted so that it renders as the text it is.
