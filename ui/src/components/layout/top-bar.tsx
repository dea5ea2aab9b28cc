import { useSignals } from "@preact/signals-react/runtime";
import { Avatar, Button, Flex, Text } from "@radix-ui/themes";
import { useTranslation } from "react-i18next";
import { Link, useLocation } from "wouter";
import i18n, { type Language } from "../../i18n";
import { toggleSidebar } from "../../stores/sidebar";
import { status, systemName } from "../../stores/status";
import { theme, toggleTheme } from "../../stores/theme";
import { toast } from "../../stores/toast";
import { isLoggedIn, logout, user } from "../../stores/user";
import { Icon } from "../icons";
import { DropdownMenu } from "../ui/dropdown-menu";
import { Lantern } from "./lantern";
import { visibleEntries } from "./sidebar";
import { initial } from "../format";

const LANGUAGE_NAMES: Record<Language, string> = { zh: "中文", en: "English" };

/** TopBar holds the site name, main links, theme and language switches and the account menu. */
export function TopBar() {
  useSignals();
  const { t } = useTranslation();
  const [, navigate] = useLocation();
  const u = user.value;
  const hasSidebar = visibleEntries().length > 0;
  const logo = status.value.logo;
  const onLogout = async () => {
    navigate("/login");
    await logout();
    toast.success(t("auth.logoutSuccess"));
  };
  const language = (i18n.language?.startsWith("en") ? "en" : "zh") as Language;
  return (
    <header className="top-bar">
      <Flex align="center" gap="2" className="top-bar-left">
        {hasSidebar ? (
          <button type="button" className="icon-button" onClick={toggleSidebar} aria-label={t("nav.toggleSidebar")}>
            <Icon name="menu" size={18} />
          </button>
        ) : null}
        <Link href="/" className="brand">
          {logo ? <img src={logo} alt="" className="brand-logo" /> : null}
          <Text weight="bold" size="3">
            {systemName.value}
          </Text>
        </Link>
        <nav className="top-links" aria-label={t("nav.main")}>
          <Link href="/" className="top-link">
            {t("nav.home")}
          </Link>
          <Link href="/about" className="top-link">
            {t("nav.about")}
          </Link>
        </nav>
      </Flex>
      <Flex align="center" gap="2" className="top-bar-right">
        <Lantern />
        <DropdownMenu.Root>
          <DropdownMenu.Trigger>
            <button type="button" className="icon-button" aria-label={t("nav.language")} data-testid="language-switch">
              <Icon name="globe" size={18} />
            </button>
          </DropdownMenu.Trigger>
          <DropdownMenu.Content>
            <DropdownMenu.RadioGroup value={language} onValueChange={(v) => void i18n.changeLanguage(v)}>
              {(Object.keys(LANGUAGE_NAMES) as Language[]).map((lng) => (
                <DropdownMenu.RadioItem key={lng} value={lng} data-testid={`language-${lng}`}>
                  {LANGUAGE_NAMES[lng]}
                </DropdownMenu.RadioItem>
              ))}
            </DropdownMenu.RadioGroup>
          </DropdownMenu.Content>
        </DropdownMenu.Root>
        <button
          type="button"
          className="icon-button"
          onClick={toggleTheme}
          aria-label={theme.value === "dark" ? t("nav.lightMode") : t("nav.darkMode")}
          data-testid="theme-toggle"
        >
          <Icon name={theme.value === "dark" ? "sun" : "moon"} size={18} />
        </button>
        {isLoggedIn.value && u ? (
          <DropdownMenu.Root>
            <DropdownMenu.Trigger>
              <button type="button" className="user-button" data-testid="user-menu">
                <Avatar size="1" radius="full" fallback={initial(u.username)} />
                <Text size="2" className="user-name">
                  {u.username}
                </Text>
              </button>
            </DropdownMenu.Trigger>
            <DropdownMenu.Content align="end">
              <DropdownMenu.Label>{u.display_name || u.username}</DropdownMenu.Label>
              <DropdownMenu.Item onSelect={() => navigate("/setting?tab=personal")}>{t("nav.personalSettings")}</DropdownMenu.Item>
              <DropdownMenu.Separator />
              <DropdownMenu.Item color="red" onSelect={() => void onLogout()} data-testid="logout">
                {t("nav.logout")}
              </DropdownMenu.Item>
            </DropdownMenu.Content>
          </DropdownMenu.Root>
        ) : (
          <Flex gap="2" className="auth-links">
            <Button variant="soft" size="2" onClick={() => navigate("/login")}>
              {t("nav.login")}
            </Button>
            {status.value.register_enabled !== false ? (
              <Button variant="outline" size="2" onClick={() => navigate("/register")}>
                {t("nav.register")}
              </Button>
            ) : null}
          </Flex>
        )}
      </Flex>
    </header>
  );
}
