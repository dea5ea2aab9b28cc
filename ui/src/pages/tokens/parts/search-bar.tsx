import { useSignals } from "@preact/signals-react/runtime";
import { Button, TextField } from "@radix-ui/themes";
import { useState, type FormEvent } from "react";
import { useTranslation } from "react-i18next";
import { searchTokens, tokensLoading } from "../../../stores/tokens";

/** SearchBar searches the user's tokens by name and by key. */
export function SearchBar() {
  useSignals();
  const { t } = useTranslation();
  const [keyword, setKeyword] = useState("");
  const [token, setToken] = useState("");
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void searchTokens({ keyword, token });
  };
  return (
    <form className="toolbar" onSubmit={submit} data-testid="token-search">
      <TextField.Root
        className="grow"
        placeholder={t("tokens.search.name")}
        value={keyword}
        onChange={(e) => setKeyword(e.target.value)}
        aria-label={t("tokens.search.name")}
        data-testid="token-search-name"
      />
      <TextField.Root
        className="grow"
        placeholder={t("tokens.search.key")}
        value={token}
        onChange={(e) => setToken(e.target.value)}
        aria-label={t("tokens.search.key")}
        data-testid="token-search-key"
      />
      <Button type="submit" loading={tokensLoading.value}>
        {t("tokens.search.submit")}
      </Button>
    </form>
  );
}
