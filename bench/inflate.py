#!/usr/bin/env python3
"""Make a large-page copy of a bench corpus: real-web page sizes with the same bodies.

Why: real-web pages are 50-150 KB of HTML, mostly site chrome (inline scripts and styles,
mega-menus, sidebars, footers, forms, SVG, comments), while the synthetic bench corpora
(`../shared/bench/*/docs.jsonl.gz`, see `../shared/bench/README.md`) have small pages
(DEV: median 6.4 KB, max 34 KB). This script wraps every page in heavy but content-free chrome so
that ingest speed and quality can be measured at real-web sizes. The ids, url, host and time are
kept, so the output is scored with the *same* truth file by `score.py`.

Usage:

    python3 bench/inflate.py IN.jsonl.gz OUT.jsonl.gz [--seed N] [--min-kb 50] [--max-kb 150]

    IN, OUT     corpus files, one JSON object per line (`id`, `url`, `host`, `time`, `html`; other
                keys are copied as they are); read / written gzip-compressed when the name ends in
                `.gz`, plain otherwise.
    --seed N    seed (default 1); the output is a deterministic function of input and seed.
    --min-kb, --max-kb
                page size bounds in KiB (1 KB = 1024 bytes of UTF-8 HTML; defaults 50 and 150).

What is added, and what is not touched:

* Every page gets a target size drawn (log-uniform) from [max(min, original + core chrome), max],
  deterministic from the seed and the page id, and is filled to exactly that many bytes.
* Per host (deterministic from host name, language and seed, so all pages of one site share it,
  like a real CMS): `<head>` material (meta/link tags, preload hints, several large inline
  `<script>` blocks of minified-looking JS whose string literals contain `<div>`, `</p>` and whose
  code has `<` comparisons, JS template strings with HTML, JSON-LD, analytics snippets, inline
  `<style>` CSS, conditional comments), a mega-menu `<nav>` of 100-400 links, top bar, header with
  search form, footer link farm and copyright lines, cookie banner, newsletter form, SVG icons,
  hidden `<template>`s, `<noscript>`, `data-*` attributes and framework-style class lists.
* Per page (chosen from per-host variants, plus a few page-specific pieces): breadcrumb, sidebar
  widgets ("related", "popular", card grids, tag clouds, ads), page-type JS/CSS chunks, a JSON
  state blob; a final JSON blob pads the page to the exact target size.
* The chrome never holds prose: only link texts, labels, short teasers (at most ~12 words / ~20
  Chinese characters), copyright lines and code. Link texts and labels are Chinese or English
  after the page's body (CJK characters, also as numeric character references, vs Latin letters).
* The original document is never altered: new material is only *inserted* -- head parts right
  before `</head>` (a `<head>` is created after `<html>` if the page has none), header/navigation
  right after the `<body ...>` tag, sidebar/footer/scripts right before `</body>`. So the original
  body content (between `<body ...>` and `</body>`) appears byte for byte, as one substring, in
  the output page; so do the original head's contents.

Pages whose original is already larger than the maximum (minus a few hundred bytes) are copied
unchanged and counted in the summary. Python 3 standard library only.
"""

import argparse
import copy
import gzip
import hashlib
import html as htmlmod
import json
import os
import random
import re
import sys
import time

KB = 1024
PAD_MIN = 128          # the final exact-size JSON pad needs at least this many bytes

# --------------------------------------------------------------------------- deterministic rngs


def mkrng(*parts):
    h = hashlib.sha256('\x1f'.join(str(p) for p in parts).encode('utf-8')).digest()
    return random.Random(int.from_bytes(h[:16], 'big'))


def hexs(r, n):
    return '%0*x' % (n, r.getrandbits(4 * n)) if n > 0 else ''


# --------------------------------------------------------------------------- vocabularies

SECTIONS = [
    ('News', '新闻', 'news'), ('World', '国际', 'world'), ('Politics', '时政', 'politics'),
    ('Business', '财经', 'finance'), ('Markets', '股票', 'stock'), ('Technology', '科技', 'tech'),
    ('Science', '科学', 'science'), ('Health', '健康', 'health'), ('Sports', '体育', 'sports'),
    ('Entertainment', '娱乐', 'ent'), ('Arts &amp; Culture', '文化', 'culture'), ('Opinion', '评论', 'opinion'),
    ('Travel', '旅游', 'travel'), ('Food &amp; Drink', '美食', 'food'), ('Autos', '汽车', 'auto'),
    ('Real Estate', '房产', 'house'), ('Education', '教育', 'edu'), ('Video', '视频', 'video'),
    ('Photos', '图片', 'photo'), ('Special Reports', '专题', 'special'), ('Community', '社区', 'bbs'),
    ('Q&amp;A', '问答', 'ask'), ('Docs', '文档', 'docs'), ('Downloads', '下载', 'download'),
    ('Shop', '商城', 'mall'), ('Home &amp; Living', '家居', 'home'), ('Style', '时尚', 'fashion'),
    ('Games', '游戏', 'games'), ('Gadgets', '数码', 'digital'), ('Military', '军事', 'mil'),
    ('Local', '地方', 'local'), ('Jobs', '招聘', 'jobs'),
]

EN_NOUNS = ('Apps Phones Laptops Security Cloud Startups Policy Energy Climate Space Football Tennis '
            'Recipes Hotels Flights Movies Music Books Gaming Parenting Fitness Nutrition Economy Stocks '
            'Crypto Jobs Tutorials Reference Downloads Plugins Themes Databases Networking Linux Python '
            'Web_Design Data Privacy Elections Courts Schools Housing Transport Trains Airlines Cars Bikes '
            'Gardening Pets Weather Art Design Fashion Beauty Podcasts Photography Markets Banking Insurance '
            'Retail Media Robots Chips Batteries Satellites Vaccines Hospitals Universities Museums Festivals '
            'Concerts Theater Comics Anime Esports Cycling Running Golf Baseball Basketball Hockey Rugby '
            'Olympics Budgets Taxes Trade Farming Oceans Wildlife Cities Maps Smart_Home TVs Cameras '
            'Headphones Wearables Software Hardware Open_Source Careers Interviews Analysis Explainers '
            'Newsletters Events Webinars Forums Answers Guides Reviews Deals Coupons Gifts Drones Tablets '
            'Routers Browsers Wallets Rentals Mortgages Pensions Startups Mobility Tourism Skincare').replace('_', ' ').split()
EN_ADJ = ('Best New Top Latest Smart Cheap Quick Weekly Daily Essential Hidden Local Global Open Modern '
          'Classic Simple Advanced Free Live Popular Trending Featured Budget Premium Green Digital Urban').split()
EN_VERBS = ('Explains Launches Tests Reviews Ranks Tracks Shows Beats Cuts Adds Plans Drops Wins Faces '
            'Rethinks Builds Boosts Delays Expands Unveils Targets Backs Eyes Weighs Slows Doubles').split()
EN_ENT = ('Regulators Startups Researchers Shoppers Developers Fans Chefs Travelers Investors Students '
          'Teachers Doctors Engineers Farmers Voters Players Artists Retailers Banks Cities Airlines').split()
EN_LABELS = {
    'home': 'Home', 'related': 'Related', 'popular': 'Most popular', 'most_read': 'Most read',
    'tags': 'Trending topics', 'subscribe': 'Subscribe', 'email': 'Email address',
    'newsletter': 'Get the daily briefing', 'newsletter_note': 'Unsubscribe at any time.',
    'cookie': 'We use cookies to improve your experience.', 'accept': 'Accept all', 'reject': 'Reject all',
    'settings': 'Cookie settings', 'search': 'Search', 'search_ph': 'Search articles, topics&hellip;',
    'login': 'Sign in', 'register': 'Register', 'menu': 'Menu', 'close': 'Close', 'more': 'More',
    'follow': 'Follow us', 'skip': 'Skip to content', 'noscript': 'Please enable JavaScript.',
    'recommended': 'Recommended for you', 'sponsored': 'Sponsored', 'breaking': 'Breaking',
    'share': 'Share', 'comments': 'Comments', 'post': 'Post comment', 'load_more': 'Load more',
    'ad': 'Advertisement', 'network': 'Our network', 'views': 'views', 'top': 'Back to top',
    'loading': 'Loading&hellip;', 'error': 'Something went wrong.', 'retry': 'Try again',
}
EN_FOOTER = ['About us', 'Contact', 'Careers', 'Advertise', 'Privacy Policy', 'Terms of Use', 'Cookie Policy',
             'Accessibility', 'Sitemap', 'Help Center', 'RSS', 'Press', 'Partners', 'Corrections', 'Licensing',
             'Editorial Standards', 'Newsletters', 'Apps', 'Events', 'Store', 'Archive', 'Authors', 'Tips',
             'Do Not Sell My Info', 'Ad Choices', 'Masthead', 'Ethics', 'Feedback', 'Podcasts', 'Gift Cards']
EN_FOOTER_HEADS = ['Company', 'Sections', 'Services', 'Support', 'Legal', 'More', 'Connect', 'Resources', 'Explore']

ZH_NOUNS = ('市场 经济 政策 数据 平台 技术 企业 项目 城市 乡村 学生 教师 医院 患者 消费 产品 手机 电脑 网络 安全 能源 '
            '环境 交通 铁路 航空 球队 比赛 电影 音乐 图书 旅游 景区 美食 餐厅 新车 房价 楼市 股市 基金 银行 保险 就业 '
            '招聘 考试 高校 人才 芯片 电池 卫星 疫苗 医保 养老 社保 农业 粮食 气象 天气 高铁 地铁 机场 航班 酒店 民宿 '
            '游戏 动漫 电竞 足球 篮球 网球 马拉松 奥运 预算 税收 外贸 物流 快递 电商 直播 短视频 云计算 大数据 '
            '人工智能 机器人 无人机 新能源 充电桩 光伏 风电 碳排放 生态 湿地 博物馆 展览 演出 话剧 综艺 电视剧 '
            '开源 编程 数据库 服务器 操作系统 浏览器 小程序 家电 家具 装修 母婴 宠物 健身 减肥 护肤 理财 信用卡 '
            '贷款 汽车 驾照 停车 共享单车 文旅 非遗 乡村振兴 科创 专利 标准 品牌 门店 社区 物业').split()
ZH_ADJ = '最新 重磅 热门 独家 深度 权威 实用 全新 年度 官方 精选 火爆 必看 快讯 原创'.split()
ZH_VERBS = ('发布 推出 启动 迎来 提升 加快 聚焦 解读 盘点 关注 回应 升级 调整 开展 落地 公布 上线 '
            '试点 亮相 突破 打造 布局 优化 实施').split()
ZH_CITIES = '北京 上海 广州 深圳 杭州 成都 武汉 南京 西安 重庆 天津 苏州 长沙 郑州 青岛 厦门 合肥 昆明'.split()
ZH_LABELS = {
    'home': '首页', 'related': '相关阅读', 'popular': '热门排行', 'most_read': '阅读排行', 'tags': '热门标签',
    'subscribe': '订阅', 'email': '电子邮箱', 'newsletter': '订阅每日精选', 'newsletter_note': '可随时退订',
    'cookie': '本站使用Cookie以改善浏览体验。', 'accept': '全部接受', 'reject': '拒绝', 'settings': 'Cookie设置',
    'search': '搜索', 'search_ph': '搜索文章、话题&hellip;', 'login': '登录', 'register': '注册', 'menu': '菜单',
    'close': '关闭', 'more': '更多', 'follow': '关注我们', 'skip': '跳到正文', 'noscript': '请启用JavaScript',
    'recommended': '为你推荐', 'sponsored': '推广', 'breaking': '快讯', 'share': '分享', 'comments': '评论',
    'post': '发表评论', 'load_more': '加载更多', 'ad': '广告', 'network': '友情链接', 'views': '阅读',
    'top': '返回顶部', 'loading': '加载中&hellip;', 'error': '加载失败', 'retry': '重试',
}
ZH_FOOTER = ['关于我们', '联系我们', '加入我们', '广告服务', '隐私政策', '用户协议', '网站地图', '帮助中心', '意见反馈',
             '版权声明', '商务合作', '投稿须知', '免责声明', '网站导航', '违法和不良信息举报', '客户端下载', '新闻线索',
             '友情链接', '网站公告', '诚聘英才', '法律顾问', '未成年人保护', '账号注销', '举报中心', '服务条款']
ZH_FOOTER_HEADS = ['关于', '服务', '帮助', '合作', '频道', '产品', '更多', '联系']
ZH_BRAND_A = '华夏 江南 新知 云帆 东方 晨光 蓝海 中原 长河 星火 北辰 南风 锦程 天衡 远航 青禾'.split()
ZH_BRAND_B = ['网', '在线', '资讯', '日报', '社区', '之家', '频道']
EN_BRAND_A = 'North Blue Silver Bright Daily Open Metro Pioneer Summit Harbor Maple Cedar Atlas Beacon'.split()
EN_BRAND_B = ['Post', 'Times', 'Wire', 'Hub', 'Journal', 'Ledger', 'Review', 'Herald', 'Network', 'Digest']

TW_UTILS = ('flex items-center justify-between justify-center gap-1 gap-2 gap-4 px-2 px-3 px-4 py-1 py-2 py-3 '
            'text-xs text-sm text-base font-medium font-semibold text-gray-500 text-gray-700 text-slate-900 '
            'hover:text-blue-600 hover:underline focus:outline-none focus-visible:ring-2 ring-offset-2 rounded '
            'rounded-md rounded-full bg-white bg-gray-50 dark:bg-slate-800 dark:text-slate-200 border border-b '
            'border-gray-200 shadow-sm transition-colors duration-150 md:flex lg:block hidden sm:inline-flex w-full '
            'max-w-7xl mx-auto grid grid-cols-2 md:grid-cols-4 space-y-2 truncate leading-6 tracking-tight '
            'relative absolute inset-0 z-10 overflow-hidden line-clamp-2 aspect-video object-cover').split()
BS_UTILS = ('d-flex d-none d-lg-block align-items-center justify-content-between col-6 col-md-3 col-lg-2 row g-3 '
            'list-unstyled small text-muted fw-bold mb-2 mt-3 p-2 px-3 border-0 shadow-sm rounded h-100 '
            'position-relative stretched-link text-truncate btn btn-sm btn-primary btn-outline-secondary').split()
WP_UTILS = ('menu-item menu-item-type-taxonomy menu-item-object-category menu-item-type-custom '
            'menu-item-object-page current-menu-parent menu-item-has-children widget widget_recent_entries '
            'wp-block-group has-small-font-size alignwide is-layout-flow entry-meta clearfix').split()
CSS_MODULE_NAMES = 'Header Nav Menu Card Sidebar Footer Promo Teaser Button Banner Search List Tile Widget Layout'.split()
FRAMEWORKS = ['vue', 'react', 'angular', 'svelte', 'none', 'none']


class Styler:
    """Per-host class lists and framework attributes (all drawn at host build time)."""

    def __init__(self, r):
        self.r = r
        self.kind = r.choice(['bem', 'tailwind', 'modules', 'bootstrap', 'wp'])
        self.prefix = r.choice(['c-', '', 'o-', 'site-', 'l-', 'm-'])
        self.fw = r.choice(FRAMEWORKS)
        self.fw_id = hexs(r, 8)
        self.cache = {}
        self.tokens = []

    def cls(self, role):
        v = self.cache.get(role)
        if v is None:
            v = [self._make(role) for _ in range(3)]
            self.cache[role] = v
            for c in v:
                for t in c.split():
                    if len(self.tokens) < 400 and t not in self.tokens:
                        self.tokens.append(t)
        return self.r.choice(v)

    def _make(self, role):
        r = self.r
        base = role.replace('_', '-')
        if self.kind == 'bem':
            b, _, e = base.partition('-')
            t = [self.prefix + b + ('__' + e if e else '')]
            if r.random() < 0.3:
                t.append(t[0] + '--' + r.choice(['active', 'primary', 'large', 'compact', 'dark', 'featured', 'sticky']))
            if r.random() < 0.2:
                t.append('js-' + base)
            return ' '.join(t)
        if self.kind == 'tailwind':
            return ' '.join(r.sample(TW_UTILS, r.randint(5, 14)))
        if self.kind == 'modules':
            comp = r.choice(CSS_MODULE_NAMES)
            parts = base.split('-')
            camel = parts[0] + ''.join(p.title() for p in parts[1:])
            t = ['%s_%s__%s' % (comp, camel, ''.join(r.choice('abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ0123456789') for _ in range(5)))]
            if r.random() < 0.3:
                t.append('%s_%s__%s' % (comp, r.choice(['root', 'wrap', 'inner', 'active']), hexs(r, 5)))
            return ' '.join(t)
        if self.kind == 'bootstrap':
            return ' '.join([base] + r.sample(BS_UTILS, r.randint(1, 5)))
        return ' '.join([base] + r.sample(WP_UTILS, r.randint(1, 4)) + (['menu-item-%d' % r.randint(100, 99999)] if r.random() < 0.4 else []))

    def sm(self, role):
        """A short class attribute for the many small elements of menus and link farms."""
        key = role + '#sm'
        v = self.cache.get(key)
        if v is None:
            if self.kind == 'tailwind':
                v = [' '.join(self.r.sample(TW_UTILS, self.r.randint(2, 3))) for _ in range(2)]
            else:
                v = [self.cls(role).split()[0] for _ in range(2)]
            self.cache[key] = v
        s = ' class="%s"' % self.r.choice(v)
        if self.fw == 'vue':
            s += ' data-v-%s' % self.fw_id
        elif self.fw == 'svelte':
            s = s[:-1] + ' svelte-%s"' % self.fw_id[:6]
        return s

    def at(self, role, extra=''):
        """' class="..." data-...' attribute string for an element of the given role."""
        r = self.r
        s = ' class="%s"' % self.cls(role)
        if self.fw == 'vue':
            s += ' data-v-%s' % self.fw_id
        elif self.fw == 'angular':
            s += ' _ngcontent-ng-c%s=""' % self.fw_id[:7]
        elif self.fw == 'react' and r.random() < 0.3:
            s += ' data-testid="%s"' % role
        elif self.fw == 'svelte':
            s = s[:-1] + ' svelte-%s"' % self.fw_id[:6]
        if r.random() < 0.15:
            s += ' data-track-id="%s-%d"' % (role, r.randint(1, 999))
        return s + extra


class Lang:
    def __init__(self, code):
        self.code = code
        self.zh = code == 'zh'
        self.L = ZH_LABELS if self.zh else EN_LABELS

    def section(self, i):
        s = SECTIONS[i]
        return (s[1] if self.zh else s[0]), s[2]

    def link_text(self, r):
        if self.zh:
            k = r.random()
            if k < 0.45:
                return r.choice(ZH_NOUNS)
            if k < 0.75:
                return r.choice(ZH_NOUNS) + r.choice(ZH_NOUNS)
            return r.choice(ZH_ADJ) + r.choice(ZH_NOUNS)
        k = r.random()
        if k < 0.5:
            return r.choice(EN_NOUNS)
        if k < 0.85:
            return r.choice(EN_ADJ) + ' ' + r.choice(EN_NOUNS)
        return r.choice(EN_NOUNS) + ' &amp; ' + r.choice(EN_NOUNS)

    def teaser(self, r):
        """A headline-like teaser: at most ~10 English words / ~20 Chinese characters, no sentence."""
        n, n2 = r.choice(EN_NOUNS if not self.zh else ZH_NOUNS), r.choice(EN_NOUNS if not self.zh else ZH_NOUNS)
        k = r.randrange(8)
        if self.zh:
            return [
                lambda: r.choice(ZH_CITIES) + r.choice(ZH_VERBS) + n + n2 + '新规',
                lambda: r.choice(ZH_ADJ) + '：' + n + r.choice(ZH_VERBS) + n2,
                lambda: n + n2 + r.choice(ZH_VERBS) + '：%d个细节值得关注' % r.randint(3, 12),
                lambda: '一图读懂%s%s' % (n, n2),
                lambda: '%d年%s%s%s' % (r.randint(2019, 2025), n, r.choice(ZH_VERBS), n2),
                lambda: n + r.choice(ZH_VERBS) + '，' + n2 + '迎来新变化',
                lambda: r.choice(ZH_CITIES) + n + '%s%d项' % (r.choice(ZH_VERBS), r.randint(2, 30)) + n2,
                lambda: '%s%s怎么选？%s' % (n, n2, r.choice(['看这篇就够了', '专家解读', '附清单', '一文说清'])),
            ][k]()
        return [
            lambda: '%d %s %s to Watch This %s' % (r.randint(3, 25), r.choice(EN_ADJ), n, r.choice(['Week', 'Month', 'Year', 'Season'])),
            lambda: 'How %s Are Changing %s' % (r.choice(EN_ENT), n),
            lambda: '%s: What to Know Before You Buy' % n,
            lambda: '%s %s %s %s Plan' % (r.choice(EN_ENT), r.choice(EN_VERBS), r.choice(EN_ADJ), n),
            lambda: 'Why %s Matter More Than Ever' % n,
            lambda: 'The %s Guide to %s and %s' % (r.choice(EN_ADJ), n, n2),
            lambda: '%s Update: %s %s %s' % (n, r.choice(EN_ENT), r.choice(EN_VERBS), n2),
            lambda: 'Inside the Race for %s %s' % (r.choice(EN_ADJ), n),
        ][k]()

    def maybe_ncr(self, r, s, p):
        """Encode CJK characters as numeric character references (some CMSs do) with probability p."""
        if not self.zh or r.random() >= p:
            return s
        return ''.join('&#x%X;' % ord(c) if '\u3400' <= c <= '\u9fff' else c for c in s)


def slug(r):
    return '-'.join(r.choice(['the', 'new', 'how', 'why', 'best', 'city', 'data', 'plan', 'guide', 'update', 'report',
                              'review', 'market', 'tech', 'local', 'world', 'policy', 'season', 'price', 'open'])
                    for _ in range(r.randint(2, 6))) + '-%d' % r.randint(10000, 9999999)


def esc(s):
    return htmlmod.escape(s, quote=True)


def jsdump(o):
    """JSON for inline <script>: no '</' (would end the script) and no '<!--'."""
    return json.dumps(o, ensure_ascii=False, separators=(',', ':')).replace('</', '<\\/').replace('<!--', '<\\!--')


# --------------------------------------------------------------------------- code generators

JS_VARS = list('etnrioasculdfphmgvybwxk')
JS_PROPS = ['id', 'url', 'title', 'src', 'width', 'height', 'index', 'length', 'offset', 'count', 'type', 'score',
            'ts', 'lang', 'slot', 'pos', 'label', 'href', 'rank', 'weight', 'priority', 'ttl', 'ratio']


def _fn(r):
    k = r.random()
    if k < 0.4:
        return r.choice(JS_VARS) + r.choice(JS_VARS) + (r.choice(JS_VARS) if r.random() < 0.5 else '')
    if k < 0.6:
        return '_0x%s' % hexs(r, 4)
    return r.choice(['init', 'render', 'mount', 'track', 'load', 'bind', 'parse', 'update', 'toggle', 'resize',
                     'debounce', 'throttle', 'observe', 'hydrate', 'sanitize']) + r.choice(['', 'Menu', 'Ads', 'Items', 'Nav', 'Cards', 'Consent', 'Slots', 'State'])


def _cls_tok(r, ctx):
    st = ctx['st']
    if not st.tokens:
        st.cls('item')
    return r.choice(st.tokens)


def _lbl(r, ctx):
    return r.choice(list(ctx['lang'].L.values())).replace('&hellip;', '')


def js_find(r, c):
    return 'function %s(e,t){for(var n=0;n<e.length;n++){if(e[n].%s<t)return e[n]}return null}' % (_fn(r), r.choice(JS_PROPS))


def js_html_concat(r, c):
    return ("var %s='<div class=\"%s\" data-id=\"'+e.id+'\"><p class=\"%s\">'+e.%s+'</p></div>';"
            % (r.choice(JS_VARS), _cls_tok(r, c), _cls_tok(r, c), r.choice(JS_PROPS)))


def js_innerhtml(r, c):
    return ('%s.innerHTML="<div class=\\"%s\\"><span>"+%s+"</span><button type=\\"button\\" aria-label=\\"%s\\">&times;</button></div>";'
            % (r.choice(JS_VARS), _cls_tok(r, c), r.choice(JS_VARS), _lbl(r, c)))


def js_hash(r, c):
    return ('function %s(t){for(var r=0,i=0,o=t.length;i<o;i++)r=(r<<5)-r+t.charCodeAt(i)|0;return r<0?-r:r}' % _fn(r))


def js_tpl(r, c):
    return ('const %s=e=>`<li class="%s"><a href="${e.url}" data-track="%s">${e.title}</a>${e.n>%d?`<span class="%s">${e.n}</span>`:""}</li>`;'
            % (_fn(r), _cls_tok(r, c), hexs(r, 6), r.randint(0, 9), _cls_tok(r, c)))


def js_webpack(r, c):
    mods = []
    for _ in range(r.randint(2, 6)):
        mods.append('%d:function(e,t,n){"use strict";n.d(t,{Z:function(){return %s}});var r=n(%d),o=n.n(r),i=n(%d);'
                    'function %s(e){var t=e.%s,n=void 0===t?%d:t;return n<%d?null:(0,i.jsx)("div",{className:"%s",children:(0,i.jsx)("p",{children:e.%s})})}}'
                    % (r.randint(100, 99999), _fn(r), r.randint(100, 99999), r.randint(100, 99999), _fn(r),
                       r.choice(JS_PROPS), r.randint(0, 50), r.randint(1, 99), _cls_tok(r, c), r.choice(JS_PROPS)))
    return '(self.webpackChunk_N_E=self.webpackChunk_N_E||[]).push([[%d],{%s}]);' % (r.randint(1, 999), ','.join(mods))


def js_i18n(r, c):
    L = c['lang'].L
    keys = r.sample(sorted(L), r.randint(6, len(L)))
    return 'window.__I18N__=window.__I18N__||{};Object.assign(window.__I18N__,%s);' % jsdump({k: L[k].replace('&hellip;', '…') for k in keys})


def js_dom(r, c):
    a = r.choice(['toggle', 'share', 'track', 'menu', 'modal', 'tab', 'lazy', 'consent'])
    return ('document.addEventListener("DOMContentLoaded",function(){var e=document.querySelectorAll("[data-%s]");'
            'Array.prototype.forEach.call(e,function(e){e.addEventListener("click",function(t){t.preventDefault();'
            'var n=e.getAttribute("data-%s");n&&n.length<%d&&%s(n)})})});' % (a, a, r.randint(8, 128), _fn(r)))


def js_strip(r, c):
    return (r'function %s(e){return String(e).replace(/<\/?(p|div|span|br)[^>]*>/g,"").split("</p>").join(" ").slice(0,%d)}'
            % (_fn(r), r.randint(40, 300)))


def js_docwrite(r, c):
    return ('document.write(\'<script src="//cdn.%s/js/%s.js?v=%d"><\\/script>\');' % (c['host'], _fn(r), r.randint(1, 9999)))


def js_ease(r, c):
    return 'function %s(e,t,n){var r=Math.max(0,Math.min(1,(e-t)/(n-t)));return r<.5?2*r*r:-1+(4-2*r)*r}' % _fn(r)


def js_fetch(r, c):
    return ('fetch("/api/v%d/%s?id="+e+"&lang=%s").then(function(e){return e.json()}).then(function(e){if(!e||e.items.length<1)return;'
            'var t=e.items.slice(0,%d).map(function(e){return\'<li><a href="\'+e.url+\'">\'+e.title+"</a></li>"}).join("");'
            'document.getElementById("%s").innerHTML=t});' % (r.randint(1, 4), r.choice(['related', 'popular', 'feed', 'recs', 'comments']),
                                                            c['lang'].code, r.randint(3, 12), _cls_tok(r, c)))


def js_config(r, c):
    return 'window.%s=%s;' % (r.choice(['__CONFIG__', '__APP_CONFIG__', 'siteConfig', '__NUXT_CFG__', 'SITE']), jsdump({
        'apiBase': 'https://api.%s/v%d' % (c['host'], r.randint(1, 4)), 'cdn': 'https://static.%s' % c['host'],
        'version': '%d.%d.%d' % (r.randint(1, 9), r.randint(0, 30), r.randint(0, 99)), 'build': hexs(r, 12),
        'features': {f: r.random() < 0.5 for f in r.sample(['lazy', 'ab', 'pwa', 'darkMode', 'comments', 'paywall', 'ads', 'push', 'amp'], 5)},
        'breakpoints': [480, 768, 1024, 1280], 'adUnits': ['/%d/%s/%s' % (r.randint(1000, 99999), c['host'].split('.')[-2], s)
                                                            for s in r.sample(['top', 'mid', 'side', 'bottom', 'sticky', 'native'], 3)]}))


def js_class(r, c):
    return ('var %s=function(){function e(e,t){this.el=e,this.opts=Object.assign({},{delay:%d,loop:!0},t||{}),this.idx=0,this.init()}'
            'return e.prototype.init=function(){var e=this;this.items=[].slice.call(this.el.querySelectorAll(".%s")),'
            'this.items.length<2||(this.timer=setInterval(function(){e.next()},this.opts.delay))},e.prototype.next=function(){'
            'this.idx=this.idx+1<this.items.length?this.idx+1:0},e}();' % (_fn(r).title(), r.randint(2000, 9000), _cls_tok(r, c)))


def js_cookie(r, c):
    return 'function %s(e){var t=document.cookie.match(new RegExp("(^| )"+e+"=([^;]+)"));return t?decodeURIComponent(t[2]):null}' % _fn(r)


def js_lazy(r, c):
    v = r.choice(JS_VARS)
    return ('"IntersectionObserver"in window&&(%s=new IntersectionObserver(function(e){e.forEach(function(e){e.isIntersecting&&'
            '(e.target.src=e.target.dataset.src,%s.unobserve(e.target))})},{rootMargin:"%dpx 0px"}));' % (v, v, r.choice([100, 200, 300, 600])))


def js_narrow(r, c):
    return ('if(window.innerWidth<%d&&!/Mobi|Android/i.test(navigator.userAgent)){document.documentElement.className+=" is-narrow"}'
            % r.choice([640, 768, 960, 1024]))


JS_SNIPPETS = [js_find, js_html_concat, js_innerhtml, js_hash, js_tpl, js_webpack, js_webpack, js_i18n, js_dom, js_strip,
               js_docwrite, js_ease, js_fetch, js_config, js_class, js_class, js_cookie, js_lazy, js_narrow]


def js_code(r, ctx, nbytes):
    head = r.choice(['!function(e,t){"object"==typeof exports&&"undefined"!=typeof module?module.exports=t():"function"==typeof define&&define.amd?define(t):(e=e||self).%s=t()}(this,function(){"use strict";' % _fn(r).title(),
                     '(function(){"use strict";', '(()=>{', ''])
    tail = {'': '', '(()=>{': '})();', '(function(){"use strict";': '})();'}.get(head, '});')
    parts = [head]
    n = len(head)
    while n < nbytes:
        s = r.choice(JS_SNIPPETS)(r, ctx)
        parts.append(s)
        n += len(s) + 8
    parts.append(tail)
    code = ''.join(parts)
    assert '</script' not in code.lower() and '<!--' not in code
    return code


def css_code(r, ctx, nbytes):
    st = ctx['st']
    for role in ('header', 'nav-item', 'nav-link', 'card', 'card-title', 'sidebar', 'footer-col', 'btn', 'widget', 'tag'):
        st.cls(role)
    toks = st.tokens

    def sel():
        t = r.choice(toks).replace(':', '\\:')
        s = '.' + t
        k = r.random()
        if k < 0.2:
            s += ' .' + r.choice(toks).replace(':', '\\:')
        elif k < 0.35:
            s += r.choice([':hover', ':focus-visible', '::before', '::after', '>a', ' li+li', ':not(:last-child)', '[aria-expanded=true]'])
        elif k < 0.45:
            s += ',.' + r.choice(toks).replace(':', '\\:')
        return s

    props = [
        lambda: 'color:#%06x' % r.getrandbits(24), lambda: 'background:#%06x' % r.getrandbits(24),
        lambda: 'background-color:rgba(%d,%d,%d,.%d)' % (r.randrange(256), r.randrange(256), r.randrange(256), r.randint(1, 9)),
        lambda: 'margin:0 %dpx' % r.randint(0, 32), lambda: 'padding:%dpx %dpx' % (r.randint(0, 24), r.randint(0, 32)),
        lambda: 'display:' + r.choice(['flex', 'block', 'inline-block', 'grid', 'none', 'inline-flex']),
        lambda: 'font-size:%s' % r.choice(['12px', '13px', '14px', '16px', '.875rem', '1.125rem', '1.5rem']),
        lambda: 'line-height:1.%d' % r.randint(1, 8), lambda: 'border-radius:%dpx' % r.randint(0, 16),
        lambda: 'box-shadow:0 %dpx %dpx rgba(0,0,0,.%d)' % (r.randint(0, 4), r.randint(2, 24), r.randint(1, 3)),
        lambda: 'transition:%s .%ds ease' % (r.choice(['all', 'color', 'opacity', 'transform']), r.randint(1, 5)),
        lambda: 'grid-template-columns:repeat(%d,1fr)' % r.randint(2, 6),
        lambda: 'position:' + r.choice(['relative', 'absolute', 'sticky', 'fixed']), lambda: 'z-index:%d' % r.randint(1, 9999),
        lambda: 'width:%d%%' % r.choice([25, 33, 50, 100]), lambda: 'max-width:%dpx' % r.choice([320, 640, 960, 1200, 1280]),
        lambda: 'overflow:hidden', lambda: 'text-overflow:ellipsis', lambda: 'white-space:nowrap',
        lambda: 'content:"%s"' % r.choice(['\\203A', '\\2022', '', '\\e90%d' % r.randint(0, 9)]),
        lambda: 'font-weight:%d00' % r.randint(3, 8), lambda: 'opacity:.%d' % r.randint(1, 9),
        lambda: 'transform:translateY(-%dpx)' % r.randint(1, 8), lambda: 'gap:%dpx' % r.randint(2, 24),
        lambda: 'font-family:%s' % r.choice(['-apple-system,BlinkMacSystemFont,"Segoe UI",Roboto,sans-serif', '"PingFang SC","Microsoft YaHei",sans-serif', 'Georgia,serif']),
    ]

    def rule():
        return sel() + '{' + ';'.join(r.choice(props)() for _ in range(r.randint(1, 6))) + '}'

    parts = [':root{--brand:#%06x;--accent:#%06x;--text:#1f2328;--muted:#6b7280;--radius:%dpx;--gap:%dpx}'
             % (r.getrandbits(24), r.getrandbits(24), r.randint(2, 12), r.randint(8, 24))]
    n = len(parts[0])
    while n < nbytes:
        k = r.random()
        if k < 0.78:
            s = rule()
        elif k < 0.92:
            s = '@media (%s-width:%dpx){%s}' % (r.choice(['max', 'min']), r.choice([480, 640, 768, 1024, 1280]), ''.join(rule() for _ in range(r.randint(2, 8))))
        elif k < 0.96:
            s = ('@font-face{font-family:"%s";src:url(/fonts/%s.woff2) format("woff2"),url(/fonts/%s.woff) format("woff");font-weight:%d00;font-display:swap}'
                 % (r.choice(['Inter', 'Source Han Sans', 'Merriweather', 'iconfont', 'Roboto']), hexs(r, 8), hexs(r, 8), r.randint(3, 8)))
        else:
            s = '@keyframes %s{0%%{opacity:0;transform:translateY(%dpx)}to{opacity:1;transform:none}}' % (_fn(r), r.randint(2, 20))
        parts.append(s)
        n += len(s)
    return ''.join(parts)


def svg_path(r):
    segs = ['M%d %d' % (r.randint(0, 24), r.randint(0, 24))]
    for _ in range(r.randint(4, 14)):
        c = r.choice('LlHhVvCcZzAa')
        if c in 'Cc':
            segs.append('%s%.1f %.1f %.1f %.1f %.1f %.1f' % tuple([c] + [r.uniform(-12, 24) for _ in range(6)]))
        elif c in 'Aa':
            segs.append('%s%d %d 0 0 1 %.2f %.2f' % (c, r.randint(1, 12), r.randint(1, 12), r.uniform(0, 24), r.uniform(0, 24)))
        elif c in 'Zz':
            segs.append('z')
        elif c in 'HhVv':
            segs.append('%s%.2f' % (c, r.uniform(-10, 24)))
        else:
            segs.append('%s%.2f %.2f' % (c, r.uniform(-10, 24), r.uniform(-10, 24)))
    return ''.join(segs)


def svg_icon(r, st, label=None):
    return ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" width="%d" height="%d"%s aria-hidden="true" focusable="false">'
            '<path fill="currentColor" d="%s"/></svg>' % (r.choice([16, 20, 24]), r.choice([16, 20, 24]), st.at('icon'), svg_path(r)))


ICONS = ['search', 'menu', 'close', 'user', 'share', 'facebook', 'twitter', 'weibo', 'wechat', 'rss', 'mail', 'arrow-right',
         'arrow-up', 'chevron-down', 'play', 'comment', 'bookmark', 'print', 'link', 'download']

# --------------------------------------------------------------------------- components
# A component is a 6-tuple of strings for the slots:
#   0 head   (before </head>)
#   1 top    (after <body ...>: header, navigation, breadcrumb, leaderboards)
#   2 open   (before </body>: close of the main column, open of the sidebar -- core only)
#   3 side   (sidebar widgets)
#   4 close  (close of the sidebar, footer -- core only)
#   5 tail   (cookie banner, forms, templates, deferred scripts, pad)
NSLOT = 6


def comp(head='', top='', open_='', side='', close='', tail=''):
    t = (head, top, open_, side, close, tail)
    return t, sum(len(s.encode('utf-8')) for s in t)


class HostKit:
    """Everything one site (host, language) shares across its pages."""

    def __init__(self, host, lang, seed):
        self.host = host
        self.lang = lang
        r = self.r = mkrng('host', seed, host, lang.code)
        st = self.st = Styler(r)
        L = lang.L
        self.ctx = {'st': st, 'lang': lang, 'host': host}
        self.ncr_p = r.choice([0, 0, 0, 0.3, 0.8]) if lang.zh else 0
        parts = host.split('.')
        name = parts[-2] if len(parts) >= 2 else host
        if lang.zh:
            self.brand = r.choice(ZH_BRAND_A) + r.choice(ZH_BRAND_B)
        else:
            words = [w.title() for w in re.split(r'[-_]', name) if w]
            self.brand = ' '.join(words) if words else r.choice(EN_BRAND_A) + ' ' + r.choice(EN_BRAND_B)
        self.cdn = 'https://%s.%s' % (r.choice(['static', 'cdn', 'assets', 'img', 's1']), '.'.join(parts[-2:]))
        # sections of the mega-menu
        idx = r.sample(range(len(SECTIONS)), r.randint(6, 12))
        self.sections = [lang.section(i) for i in idx]
        self.gtm = 'GTM-%s' % hexs(r, 6).upper()
        self.ga = 'G-%s' % hexs(r, 10).upper()
        self.core_head = self._core_head()
        self.nav = self._nav()
        self.top_pre = self._top_pre()
        self.top_post = '\n<div%s id="page" data-layout="%s"><main%s id="main" role="main">\n' % (
            st.at('page-wrap'), r.choice(['two-col', 'article', 'default', 'with-sidebar']), st.at('main-col'))
        self.open_ = '\n</main><!-- /#main -->\n<aside%s role="complementary" aria-label="%s">' % (st.at('sidebar'), esc(L['related']))
        self.close_ = '</aside><!-- /.sidebar -->\n</div><!-- /#page -->\n' + self._footer()
        self.core_tail = self._cookie() + self._newsletter()
        self.big = self._big()
        self.pool = self._pool()
        for role in ('breadcrumb', 'breadcrumb-list'):    # roles used per page: create their class variants now
            st.cls(role)

    # ---- head ----
    def _core_head(self):
        r, host, st = self.r, self.host, self.st
        cdn = self.cdn
        h = ['<meta http-equiv="X-UA-Compatible" content="IE=edge">',
             '<meta name="robots" content="index,follow,max-image-preview:large">',
             '<meta name="theme-color" content="#%06x">' % r.getrandbits(24),
             '<meta name="format-detection" content="telephone=no">',
             '<meta property="og:site_name" content="%s">' % esc(self.brand),
             '<meta property="og:type" content="article">',
             '<meta name="twitter:card" content="summary_large_image">',
             '<meta name="twitter:site" content="@%s">' % re.sub(r'[^a-z0-9]', '', host.split('.')[-2] if '.' in host else host)[:15],
             '<meta name="referrer" content="%s">' % r.choice(['always', 'strict-origin-when-cross-origin', 'no-referrer-when-downgrade']),
             '<link rel="icon" href="/favicon.ico" sizes="any">',
             '<link rel="icon" href="%s/img/icon.svg" type="image/svg+xml">' % cdn]
        for s in (57, 72, 114, 120, 152, 180)[:r.randint(2, 6)]:
            h.append('<link rel="apple-touch-icon" sizes="%dx%d" href="%s/img/apple-touch-icon-%d.png">' % (s, s, cdn, s))
        h.append('<link rel="manifest" href="/site.webmanifest">')
        for d in r.sample(['www.googletagmanager.com', 'www.google-analytics.com', 'securepubads.g.doubleclick.net',
                           'hm.baidu.com', 'fonts.gstatic.com', 'cdn.jsdelivr.net', 'connect.facebook.net',
                           'static.' + host, 'img.' + host], r.randint(3, 7)):
            h.append('<link rel="dns-prefetch" href="//%s">' % d)
        for _ in range(r.randint(1, 3)):
            h.append('<link rel="preconnect" href="%s" crossorigin>' % cdn)
        for _ in range(r.randint(1, 4)):
            h.append('<link rel="preload" href="%s/fonts/%s.woff2" as="font" type="font/woff2" crossorigin>' % (cdn, hexs(r, 10)))
        h.append('<link rel="preload" href="%s/css/app.%s.css" as="style">' % (cdn, hexs(r, 8)))
        h.append('<link rel="stylesheet" href="%s/css/app.%s.css" media="all">' % (cdn, hexs(r, 8)))
        for _ in range(r.randint(2, 8)):
            h.append('<link rel="modulepreload" href="%s/_next/static/chunks/%d-%s.js">' % (cdn, r.randint(100, 9999), hexs(r, 16)))
        h.append('<link rel="alternate" type="application/rss+xml" title="RSS" href="/rss.xml">')
        h.append('<link rel="search" type="application/opensearchdescription+xml" title="%s" href="/opensearch.xml">' % esc(self.brand))
        h.append('<!--[if lt IE 9]><script src="%s/js/html5shiv.min.js"></script><script src="%s/js/respond.min.js"></script><![endif]-->' % (cdn, cdn))
        return '\n'.join(h) + '\n'

    def _nav(self):
        r, st, lang = self.r, self.st, self.lang
        total = r.randint(100, 400)
        nsec = len(self.sections)
        out = ['\n<nav%s aria-label="Main navigation" data-module="mega-menu" data-ga-category="nav">' % st.at('nav'),
               '<button type="button"%s aria-controls="mega" aria-expanded="false" data-toggle="menu">%s<span>%s</span></button>'
               % (st.at('nav-toggle'), svg_icon(r, st), lang.L['menu']),
               '<ul%s id="mega" role="menubar">' % st.at('nav-list'),
               '<li%s role="none"><a%s role="menuitem" href="/">%s</a></li>' % (st.at('nav-item'), st.at('nav-link'), lang.L['home'])]
        left = total - nsec - 1
        for i, (label, sl) in enumerate(self.sections):
            n_links = left // (nsec - i) + r.randint(-3, 3) if i < nsec - 1 else left
            n_links = max(4, n_links)
            left -= n_links
            out.append('<li%s role="none" data-menu-id="%d"><a%s role="menuitem" href="/%s/" aria-haspopup="true" aria-expanded="false">%s</a>'
                       % (st.at('nav-item'), i + 1, st.at('nav-link'), sl, lang.maybe_ncr(r, label, self.ncr_p)))
            out.append('<div%s hidden><div%s>' % (st.at('mega-panel'), st.at('mega-inner')))
            ncol = r.randint(2, 4)
            per = [n_links // ncol + (1 if j < n_links % ncol else 0) for j in range(ncol)]
            for j in range(ncol):
                out.append('<div%s><span%s>%s</span><ul%s>' % (st.sm('mega-col'), st.sm('mega-heading'),
                                                               lang.maybe_ncr(r, lang.link_text(r), self.ncr_p), st.sm('mega-list')))
                for _ in range(per[j]):
                    t = lang.link_text(r)
                    sub = slug(r).rsplit('-', 1)[0][:16]
                    ga = ' data-ga="%s|%s"' % (sl, sub) if r.random() < 0.2 else ''
                    out.append('<li><a href="/%s/%s/"%s%s>%s</a></li>'
                               % (sl, sub, st.sm('mega-link'), ga, lang.maybe_ncr(r, t, self.ncr_p)))
                out.append('</ul></div>')
            out.append('</div></div></li>')
        out.append('<li%s role="none"><a%s role="menuitem" href="/more/">%s&nbsp;&raquo;</a></li>' % (st.at('nav-item'), st.at('nav-link'), lang.L['more']))
        out.append('</ul></nav>\n')
        return '\n'.join(out)

    def _top_pre(self):
        r, st, L, lang = self.r, self.st, self.lang.L, self.lang
        sprite = ''.join('<symbol id="icon-%s" viewBox="0 0 24 24"><path d="%s"/></symbol>' % (n, svg_path(r)) for n in ICONS)
        out = ['\n<!-- Google Tag Manager (noscript) -->',
               '<noscript><iframe src="https://www.googletagmanager.com/ns.html?id=%s" height="0" width="0" style="display:none;visibility:hidden"></iframe></noscript>' % self.gtm,
               '<!-- End Google Tag Manager (noscript) -->',
               '<noscript><div%s>%s</div></noscript>' % (st.at('noscript-warning'), L['noscript']),
               '<svg xmlns="http://www.w3.org/2000/svg" style="display:none" aria-hidden="true">%s</svg>' % sprite,
               '<a%s href="#main">%s</a>' % (st.at('skip-link'), L['skip']),
               '<div%s data-sticky="true"><div%s>' % (st.at('topbar'), st.at('topbar-inner')),
               '<ul%s><li><a href="/app/">App</a></li><li><a href="/newsletters/">%s</a></li><li><a href="/%s/">%s</a></li></ul>'
               % (st.at('topbar-links'), L['subscribe'], self.sections[0][1], self.sections[0][0]),
               '<div%s><a href="?lang=en" hreflang="en" lang="en">English</a>&nbsp;|&nbsp;<a href="?lang=zh" hreflang="zh" lang="zh">&#x4E2D;&#x6587;</a></div>' % st.at('lang-switch'),
               '<div%s><a href="/account/login?next=%%2F"%s>%s<svg%s><use href="#icon-user"></use></svg></a>&nbsp;<a href="/account/register"%s>%s</a></div>'
               % (st.at('account'), st.at('btn-login'), L['login'], st.at('icon'), st.at('btn-register'), L['register']),
               '</div></div>',
               '<header%s role="banner" data-module="header"><div%s>' % (st.at('header'), st.at('header-inner')),
               '<a href="/"%s aria-label="%s"><svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 160 32" width="160" height="32"%s><path d="%s"/><path d="%s"/><path d="%s"/></svg></a>'
               % (st.at('logo'), esc(self.brand), st.at('logo-svg'), svg_path(r), svg_path(r), svg_path(r)),
               '<form%s role="search" action="/search" method="get" data-module="search"><label for="q" class="sr-only">%s</label>'
               '<input type="search" id="q" name="q"%s placeholder="%s" autocomplete="off" maxlength="%d">'
               '<input type="hidden" name="src" value="header"><button type="submit"%s aria-label="%s"><svg%s><use href="#icon-search"></use></svg></button></form>'
               % (st.at('search'), L['search'], st.at('search-input'), L['search_ph'], r.choice([64, 100, 128]),
                  st.at('search-btn'), L['search'], st.at('icon')),
               '</div></header><!-- /header -->']
        return '\n'.join(out)

    def _footer(self):
        r, st, lang = self.r, self.st, self.lang
        L = lang.L
        F, FH = (ZH_FOOTER, ZH_FOOTER_HEADS) if lang.zh else (EN_FOOTER, EN_FOOTER_HEADS)
        out = ['<footer%s role="contentinfo" data-module="footer">' % st.at('footer'), '<div%s>' % st.at('footer-top')]
        for hd in r.sample(FH, r.randint(3, min(6, len(FH)))):
            out.append('<div%s><h4%s>%s</h4><ul%s>' % (st.at('footer-col'), st.at('footer-heading'), hd, st.at('footer-list')))
            for _ in range(r.randint(6, 15)):
                t = r.choice(F) if r.random() < 0.6 else lang.link_text(r)
                out.append('<li><a href="/%s/"%s>%s</a></li>' % (slug(r).rsplit('-', 1)[0][:16], st.sm('footer-link'), t))
            out.append('</ul></div>')
        out.append('</div>')
        out.append('<div%s><span%s>%s</span>' % (st.at('footer-network'), st.at('footer-heading'), L['network']))
        for _ in range(r.randint(10, 30)):
            if lang.zh:
                name = r.choice(ZH_BRAND_A) + r.choice(ZH_BRAND_B)
            else:
                name = r.choice(EN_BRAND_A) + ' ' + r.choice(EN_BRAND_B)
            out.append('<a href="https://www.%s.%s/" target="_blank" rel="noopener">%s</a>&nbsp;'
                       % (hexs(r, 6), r.choice(['com', 'net', 'cn', 'org', 'com.cn']), name))
        out.append('</div>')
        out.append('<div%s><span>%s</span>' % (st.at('footer-social'), L['follow']))
        for n in r.sample(ICONS[5:10], 4):
            out.append('<a href="https://%s.com/%s"%s aria-label="%s"><svg%s><use href="#icon-%s"></use></svg></a>'
                       % (n, hexs(r, 6), st.at('social-link'), n, st.at('icon'), n))
        out.append('</div>')
        y0 = r.randint(1998, 2012)
        if lang.zh:
            out.append('<p%s>Copyright &copy; %d-2024 %s 版权所有</p>' % (st.at('copyright'), y0, esc(self.brand)))
            out.append('<p%s><a href="https://beian.miit.gov.cn/" target="_blank">%sICP备%08d号-%d</a>&nbsp;&nbsp;'
                       '<a href="http://www.beian.gov.cn/" target="_blank">%s公网安备 %d号</a></p>'
                       % (st.at('beian'), r.choice('京沪粤浙苏川鄂'), r.randint(10 ** 7, 10 ** 8 - 1), r.randint(1, 9),
                          r.choice('京沪粤浙苏川鄂'), r.randint(10 ** 13, 10 ** 14 - 1)))
            out.append('<p%s>互联网新闻信息服务许可证：%d&nbsp;&middot;&nbsp;举报电话：010-%d</p>' % (st.at('license'), r.randint(10 ** 10, 10 ** 11 - 1), r.randint(10 ** 7, 10 ** 8 - 1)))
        else:
            out.append('<p%s>&copy; %d&ndash;2024 %s. All rights reserved.</p>' % (st.at('copyright'), y0, esc(self.brand)))
            out.append('<p%s>Registered office: %d %s Street. Company No. %08d.</p>'
                       % (st.at('legal'), r.randint(1, 300), r.choice(EN_BRAND_A), r.randint(10 ** 6, 10 ** 8 - 1)))
        out.append('<a href="#page"%s>%s&nbsp;&uarr;</a>' % (st.at('back-to-top'), L['top']))
        out.append('</footer>\n')
        return '\n'.join(out)

    def _cookie(self):
        r, st, L = self.r, self.st, self.lang.L
        return ('\n<div%s id="cookie-banner" role="dialog" aria-live="polite" aria-label="%s" data-consent-version="%d" hidden>'
                '<p%s>%s <a href="/cookie-policy">%s</a></p>'
                '<form%s method="post" action="/consent"><input type="hidden" name="csrf_token" value="%s">'
                '<button type="submit" name="consent" value="all"%s data-consent="all">%s</button>'
                '<button type="submit" name="consent" value="none"%s data-consent="none">%s</button>'
                '<button type="button"%s data-toggle="consent-settings">%s</button></form></div>\n'
                % (st.at('cookie-banner'), L['settings'], r.randint(1, 9), st.at('cookie-text'), L['cookie'], L['settings'],
                   st.at('cookie-form'), hexs(r, 32), st.at('btn-accept'), L['accept'], st.at('btn-reject'), L['reject'],
                   st.at('btn-settings'), L['settings']))

    def _newsletter(self):
        r, st, L = self.r, self.st, self.lang.L
        return ('<section%s data-module="newsletter" data-list-id="%d"><h3%s>%s</h3>'
                '<form%s action="/newsletter/subscribe" method="post" novalidate>'
                '<label for="nl-email"%s>%s</label><input type="email" id="nl-email" name="email"%s placeholder="name@example.com" required autocomplete="email">'
                '<input type="hidden" name="source" value="footer"><input type="hidden" name="csrf" value="%s">'
                '<input type="checkbox" id="nl-consent" name="consent" value="1" required><label for="nl-consent">%s</label>'
                '<button type="submit"%s>%s</button></form></section>\n'
                % (st.at('newsletter'), r.randint(100, 9999), st.at('newsletter-title'), L['newsletter'], st.at('newsletter-form'),
                   st.at('label'), L['email'], st.at('input'), hexs(r, 24), L['newsletter_note'], st.at('btn-subscribe'), L['subscribe']))

    def _template_el(self, r):
        st, L = self.st, self.lang.L
        k = r.randrange(4)
        if k == 0:
            inner = '<div%s role="status"><span%s></span><button type="button"%s aria-label="%s">&times;</button></div>' % (
                st.at('toast'), st.at('toast-msg'), st.at('toast-close'), L['close'])
        elif k == 1:
            inner = '<li%s><a%s href=""><img%s src="" alt="" loading="lazy" width="120" height="80"><span%s></span></a></li>' % (
                st.at('card'), st.at('card-link'), st.at('card-img'), st.at('card-title'))
        elif k == 2:
            inner = ('<div%s role="dialog" aria-modal="true"><form method="post" action="/account/login"><input type="text" name="user" autocomplete="username">'
                     '<input type="password" name="pass" autocomplete="current-password"><button type="submit">%s</button></form></div>') % (st.at('modal'), L['login'])
        else:
            inner = '<div%s><span%s>%s</span><button type="button"%s>%s</button></div>' % (
                st.at('error-box'), st.at('error-msg'), L['error'], st.at('btn-retry'), L['retry'])
        return '\n<template id="tpl-%s-%s">%s</template>' % (r.choice(['toast', 'card', 'modal', 'error', 'item', 'row']), hexs(r, 4), inner)

    def _script(self, r, nbytes, attrs=''):
        return '\n<script%s>%s</script>' % (attrs, js_code(r, self.ctx, nbytes))

    def _style(self, r, nbytes):
        return '\n<style%s>%s</style>' % (r.choice(['', ' media="all"', ' id="critical-css"', ' data-href="%s/css/%s.css"' % (self.cdn, hexs(r, 8))]),
                                           css_code(r, self.ctx, nbytes))

    # ---- host-level big items, added in order while they fit ----
    def _big(self):
        r, host, L = self.r, self.host, self.lang.L
        budget = r.uniform(50, 120) * KB
        items = []
        # analytics
        if self.lang.zh and r.random() < 0.7:
            an = ('\n<script>var _hmt=_hmt||[];(function(){var hm=document.createElement("script");hm.src="https://hm.baidu.com/hm.js?%s";'
                  'var s=document.getElementsByTagName("script")[0];s.parentNode.insertBefore(hm,s)})();</script>' % hexs(r, 32))
        else:
            an = ''
        an += ('\n<script async src="https://www.googletagmanager.com/gtag/js?id=%s"></script>'
               '\n<script>window.dataLayer=window.dataLayer||[];function gtag(){dataLayer.push(arguments)}gtag("js",new Date());'
               'gtag("config","%s",{anonymize_ip:true,send_page_view:%s});if(window.innerWidth<768){gtag("set",{device:"m"})}</script>'
               '\n<script>(function(w,d,s,l,i){w[l]=w[l]||[];w[l].push({"gtm.start":new Date().getTime(),event:"gtm.js"});'
               'var f=d.getElementsByTagName(s)[0],j=d.createElement(s),dl=l!="dataLayer"?"&l="+l:"";j.async=true;'
               'j.src="https://www.googletagmanager.com/gtm.js?id="+i+dl;f.parentNode.insertBefore(j,f)})(window,document,"script","dataLayer","%s");</script>'
               % (self.ga, self.ga, r.choice(['true', 'false']), self.gtm))
        items.append(comp(head=an))
        org = {'@context': 'https://schema.org', '@graph': [
            {'@type': r.choice(['NewsMediaOrganization', 'Organization', 'Corporation']), '@id': 'https://%s/#org' % host,
             'name': self.brand, 'url': 'https://%s/' % host,
             'logo': {'@type': 'ImageObject', 'url': '%s/img/logo-%s.png' % (self.cdn, hexs(r, 6)), 'width': 600, 'height': 60},
             'sameAs': ['https://%s.com/%s' % (s, hexs(r, 6)) for s in r.sample(['facebook', 'twitter', 'weibo', 'youtube', 'linkedin'], 3)]},
            {'@type': 'WebSite', '@id': 'https://%s/#website' % host, 'url': 'https://%s/' % host, 'name': self.brand,
             'inLanguage': 'zh-CN' if self.lang.zh else 'en-US',
             'potentialAction': {'@type': 'SearchAction', 'target': 'https://%s/search?q={search_term_string}' % host,
                                 'query-input': 'required name=search_term_string'}}]}
        items.append(comp(head='\n<script type="application/ld+json">%s</script>' % jsdump(org)))
        # facebook pixel (script + noscript image)
        px = hexs(r, 15)
        items.append(comp(head=('\n<script>!function(f,b,e,v,n,t,s){if(f.fbq)return;n=f.fbq=function(){n.callMethod?n.callMethod.apply(n,arguments):n.queue.push(arguments)};'
                                'if(!f._fbq)f._fbq=n;n.push=n;n.loaded=!0;n.version="2.0";n.queue=[];t=b.createElement(e);t.async=!0;t.src=v;'
                                's=b.getElementsByTagName(e)[0];s.parentNode.insertBefore(t,s)}(window,document,"script","https://connect.facebook.net/en_US/fbevents.js");'
                                'fbq("init","%s");fbq("track","PageView");</script>'
                                '\n<noscript><img height="1" width="1" style="display:none" alt="" src="https://www.facebook.com/tr?id=%s&amp;ev=PageView&amp;noscript=1"></noscript>') % (px, px)))
        # app config + i18n + template strings (head)
        cfg = js_config(r, self.ctx) + js_i18n(r, self.ctx) + ''.join(js_tpl(r, self.ctx) for _ in range(3)) + js_innerhtml(r, self.ctx)
        items.append(comp(head='\n<script>%s</script>' % cfg))
        items.append(comp(head='\n<!--[if IE]><link rel="stylesheet" href="%s/css/ie.%s.css"><![endif]-->' % (self.cdn, hexs(r, 6))))
        used = sum(c[1] for c in items)
        rest = max(20 * KB, budget - used)
        n_css, n_js, n_def = r.randint(2, 5), r.randint(2, 4), r.randint(1, 3)
        shares = [r.uniform(0.8, 1.2) * w for w in [0.3 / n_css] * n_css + [0.5 / n_js] * n_js + [0.2 / n_def] * n_def]
        tot = sum(shares)
        kinds = ['css'] * n_css + ['js'] * n_js + ['def'] * n_def
        order = list(range(len(kinds)))
        r.shuffle(order)
        for k, i in enumerate(order):
            size = int(rest * shares[i] / tot)
            if kinds[i] == 'css':
                items.append(comp(head=self._style(r, size)))
            elif kinds[i] == 'js':
                items.append(comp(head=self._script(r, size, r.choice(['', ' id="__app-vendor"', ' data-cfasync="false"', ' nonce="%s"' % hexs(r, 16)]))))
            else:
                items.append(comp(tail=self._script(r, size, r.choice(['', ' data-deferred="1"', ' type="text/javascript"']))))
            if k == 1:
                items.append(comp(tail=''.join(self._template_el(r) for _ in range(r.randint(2, 5)))))
        return items

    # ---- per-page variants (each page picks some) ----
    def _related(self, r, key):
        st, lang = self.st, self.lang
        out = ['<section%s data-widget="%s"><h3%s>%s</h3><ul%s>' % (st.at('widget'), key, st.at('widget-title'), lang.L[key], st.at('widget-list'))]
        for i in range(r.randint(5, 10)):
            img = ('<img%s src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" data-src="%s/img/%s/%s.jpg" alt="" loading="lazy" width="120" height="80">'
                   % (st.at('thumb'), self.cdn, hexs(r, 2), hexs(r, 12))) if r.random() < 0.6 else ''
            out.append('<li%s data-pos="%d"><a href="/%s/%d/%s.html"%s>%s<span%s>%s</span></a><time datetime="2024-%02d-%02d"%s>%02d-%02d</time></li>'
                       % (st.at('widget-item'), i + 1, r.choice(self.sections)[1], r.randint(2019, 2024), slug(r), st.at('widget-link'), img,
                          st.at('widget-text'), lang.teaser(r), r.randint(1, 12), r.randint(1, 28), st.at('meta'), r.randint(1, 12), r.randint(1, 28)))
        out.append('</ul></section>')
        return comp(side='\n'.join(out))

    def _popular(self, r):
        st, lang = self.st, self.lang
        out = ['<section%s data-widget="popular"><h3%s>%s</h3><ol%s>' % (st.at('widget'), st.at('widget-title'),
                                                                           lang.L[r.choice(['popular', 'most_read'])], st.at('rank-list'))]
        for i in range(r.randint(8, 12)):
            v = r.randint(1000, 999999)
            cnt = ('%.1f万%s' % (v / 10000, lang.L['views'])) if lang.zh else ('%dK %s' % (v // 1000, lang.L['views']))
            out.append('<li%s><span%s>%d</span><a href="/a/%s.html"%s>%s</a><em%s>%s</em></li>'
                       % (st.at('rank-item'), st.at('rank-no'), i + 1, hexs(r, 10), st.at('rank-link'), lang.teaser(r), st.at('rank-count'), cnt))
        out.append('</ol></section>')
        return comp(side='\n'.join(out))

    def _grid(self, r):
        st, lang = self.st, self.lang
        out = ['<section%s data-widget="recs" data-algo="%s"><h3%s>%s</h3><div%s>' % (
            st.at('recs'), r.choice(['cf-v2', 'trending', 'editorial', 'hybrid']), st.at('widget-title'), lang.L['recommended'], st.at('card-grid'))]
        for _ in range(r.randint(4, 8)):
            im = hexs(r, 12)
            spons = '<span%s>%s</span>' % (st.at('badge'), lang.L['sponsored']) if r.random() < 0.2 else ''
            out.append('<article%s data-id="%d" data-type="%s"><a href="/%s/%s.html"%s>'
                       '<picture><source type="image/webp" srcset="%s/img/%s-320.webp 320w, %s/img/%s-640.webp 640w"><img%s src="%s/img/%s-320.jpg" alt="" loading="lazy" decoding="async" width="320" height="180"></picture>'
                       '%s<span%s>%s</span><h4%s>%s</h4></a></article>'
                       % (st.at('card'), r.randint(10 ** 5, 10 ** 8), r.choice(['article', 'video', 'gallery']), r.choice(self.sections)[1], slug(r),
                          st.at('card-link'), self.cdn, im, self.cdn, im, st.at('card-img'), self.cdn, im, spons,
                          st.at('card-kicker'), r.choice(self.sections)[0], st.at('card-title'), lang.teaser(r)))
        out.append('</div></section>')
        return comp(side='\n'.join(out))

    def _tags(self, r):
        st, lang = self.st, self.lang
        links = ''.join('<a href="/tag/%s/"%s data-count="%d">%s</a>' % (hexs(r, 6), st.at('tag'), r.randint(1, 9999), lang.link_text(r))
                        for _ in range(r.randint(20, 40)))
        return comp(side='<section%s data-widget="tags"><h3%s>%s</h3><div%s>%s</div></section>' % (
            st.at('widget'), st.at('widget-title'), lang.L['tags'], st.at('tag-cloud'), links))

    def _ad(self, r):
        st, L = self.st, self.lang.L
        slot = r.choice(['top', 'mid', 'side', 'sticky', 'native', 'rail'])
        did = 'div-gpt-ad-%d-%d' % (r.randint(10 ** 12, 10 ** 13 - 1), r.randint(0, 9))
        s = ('<div%s data-ad-unit="/%d/%s/%s" data-sizes="[[300,250],[300,600],[728,90]]" data-refresh="%d" data-lazy="true">'
             '<span%s>%s</span><div id="%s"></div><script>window.googletag=window.googletag||{cmd:[]};googletag.cmd.push(function(){'
             'var s=googletag.defineSlot("/%d/%s","%s",[[300,250],[728,90]],"%s");if(s){s.addService(googletag.pubads());'
             'if(window.innerWidth<%d)s.setTargeting("pos","m")}googletag.display("%s")});</script></div>'
             % (st.at('ad-slot'), r.randint(1000, 99999), slot, hexs(r, 4), r.choice([0, 30, 60]), st.at('ad-label'), L['ad'], did,
                r.randint(1000, 99999), slot, did, did, r.choice([728, 768, 970]), did))
        return comp(top='\n' + s) if slot in ('top', 'sticky') else comp(side='\n' + s)

    def _ticker(self, r):
        st, lang = self.st, self.lang
        items = ''.join('<li%s><a href="/live/%s">%s</a></li>' % (st.at('ticker-item'), hexs(r, 8), lang.teaser(r)) for _ in range(r.randint(5, 8)))
        return comp(top='\n<div%s data-module="ticker" aria-live="off"><strong%s>%s</strong><ul%s>%s</ul></div>'
                        % (st.at('ticker'), st.at('ticker-label'), lang.L['breaking'], st.at('ticker-list'), items))

    def _share(self, r):
        st, L = self.st, self.lang.L
        btns = ''.join('<button type="button"%s data-share="%s" aria-label="%s %s"><svg%s><use href="#icon-%s"></use></svg></button>'
                       % (st.at('share-btn'), n, L['share'], n, st.at('icon'), n) for n in r.sample(ICONS[4:10] + ['mail', 'link', 'print'], 5))
        return comp(side='\n<div%s data-module="share"><span%s>%s</span>%s</div>' % (st.at('share'), st.at('share-label'), L['share'], btns))

    def _comments(self, r):
        st, L = self.st, self.lang.L
        return comp(tail=('\n<section%s id="comments" data-module="comments" data-thread="%s"><h3%s>%s <span%s>(0)</span></h3>'
                          '<form%s method="post" action="/comments/post"><textarea name="body"%s rows="3" maxlength="2000"></textarea>'
                          '<input type="hidden" name="thread" value="%s"><button type="submit"%s>%s</button></form>'
                          '<div%s data-empty="true"></div><button type="button"%s data-more="1">%s</button></section>')
                    % (st.at('comments'), hexs(r, 10), st.at('comments-title'), L['comments'], st.at('count'), st.at('comment-form'),
                       st.at('textarea'), hexs(r, 10), st.at('btn'), L['post'], st.at('comment-list'), st.at('btn-more'), L['load_more']))

    def _pool(self):
        r = self.r
        pool = []   # (kind, component)
        for _ in range(24):
            pool.append(('related', self._related(r, 'related')))
        for _ in range(12):
            pool.append(('popular', self._popular(r)))
        for _ in range(16):
            pool.append(('grid', self._grid(r)))
        for _ in range(8):
            pool.append(('tags', self._tags(r)))
        for _ in range(12):
            pool.append(('ad', self._ad(r)))
        for _ in range(6):
            pool.append(('ticker', self._ticker(r)))
        for _ in range(3):
            pool.append(('share', self._share(r)))
        for _ in range(3):
            pool.append(('comments', self._comments(r)))
        for _ in range(10):
            pool.append(('template', comp(tail=''.join(self._template_el(r) for _ in range(r.randint(1, 3))))))
        for _ in range(18):
            sz = int(r.uniform(3, 14) * KB)
            if r.random() < 0.5:
                pool.append(('js', comp(head=self._script(r, sz, ' data-chunk="%s"' % hexs(r, 8)))))
            else:
                pool.append(('js', comp(tail=self._script(r, sz, ' data-chunk="%s"' % hexs(r, 8)))))
        for _ in range(8):
            pool.append(('css', comp(head=self._style(r, int(r.uniform(2, 8) * KB)))))
        return pool


POOL_CAPS = {'related': 2, 'popular': 2, 'grid': 2, 'tags': 1, 'ad': 5, 'ticker': 1, 'share': 1, 'comments': 1,
             'template': 3, 'js': 10 ** 6, 'css': 10 ** 6}

# --------------------------------------------------------------------------- page

CJK_RE = re.compile('[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]')
NCR_RE = re.compile(r'&#(?:[xX]([0-9a-fA-F]+)|([0-9]+));')
SCRIPT_RE = re.compile(r'<(script|style)\b.*?</\1\s*>', re.S | re.I)
TAG_RE = re.compile(r'<[^>]*>')
LATIN_RE = re.compile(r'[A-Za-z]')
HEAD_CLOSE_RE = re.compile(r'</head\s*>', re.I)
BODY_OPEN_RE = re.compile(r'<body\b[^>]*>', re.I)
BODY_CLOSE_RE = re.compile(r'</body\s*>', re.I)
HTML_OPEN_RE = re.compile(r'<html\b[^>]*>', re.I)
HTML_CLOSE_RE = re.compile(r'</html\s*>', re.I)
DOCTYPE_RE = re.compile(r'\s*<!doctype[^>]*>', re.I)


def detect_lang(body):
    text = TAG_RE.sub(' ', SCRIPT_RE.sub(' ', body))
    cjk = len(CJK_RE.findall(text))
    for m in NCR_RE.finditer(text):
        cp = int(m.group(1), 16) if m.group(1) else int(m.group(2))
        if 0x3400 <= cp <= 0x9fff:
            cjk += 1
    latin = len(LATIN_RE.findall(NCR_RE.sub(' ', text)))
    return 'zh' if cjk >= 10 and cjk * 8 >= latin else 'en'


def find_slots(h):
    """Insertion points (head, top, bottom) and whether a <head> must be created."""
    m = HEAD_CLOSE_RE.search(h)
    if m:
        head_at, create_head, pos = m.start(), False, m.end()
    else:
        create_head = True
        mb = BODY_OPEN_RE.search(h)
        mh = HTML_OPEN_RE.search(h)
        if mh and (not mb or mh.end() <= mb.start()):
            head_at = mh.end()
        elif mb:
            head_at = mb.start()
        else:
            md = DOCTYPE_RE.match(h)
            head_at = md.end() if md else 0
        pos = head_at
    mb = BODY_OPEN_RE.search(h, pos)
    top_at = mb.end() if mb else pos
    closes = [x.start() for x in BODY_CLOSE_RE.finditer(h, top_at)]
    if closes:
        bottom_at = closes[-1]
    else:
        closes = [x.start() for x in HTML_CLOSE_RE.finditer(h, top_at)]
        bottom_at = closes[-1] if closes else len(h)
    return head_at, create_head, top_at, bottom_at


class Inflater:
    def __init__(self, seed, min_b, max_b):
        self.seed, self.min_b, self.max_b = seed, min_b, max_b
        self.kits = {}

    def kit(self, host, lang):
        k = (host, lang)
        if k not in self.kits:
            self.kits[k] = HostKit(host, Lang(lang), self.seed)
        return self.kits[k]

    def page(self, doc):
        h = doc['html']
        s0 = len(h.encode('utf-8'))
        head_at, create_head, top_at, bottom_at = find_slots(h)
        lang = detect_lang(h[top_at:bottom_at])
        kit = self.kit(doc.get('host') or '', lang)
        r = mkrng('page', self.seed, doc['id'])
        st = copy.copy(kit.st)      # page-level picks use the page's rng, so a page never depends on other pages
        st.r = r
        L = kit.lang.L
        url = doc.get('url') or ''

        # per-page core: host core + page bits (og:url, breadcrumb, JSON-LD breadcrumb)
        sec_label, sec_slug = kit.sections[r.randrange(len(kit.sections))]
        crumbs = [(L['home'], '/'), (sec_label, '/%s/' % sec_slug), (kit.lang.link_text(r), '/%s/%s/' % (sec_slug, hexs(r, 4)))]
        bc = ('<nav%s aria-label="breadcrumb"><ol%s itemscope itemtype="https://schema.org/BreadcrumbList">%s</ol></nav>'
              % (st.at('breadcrumb'), st.at('breadcrumb-list'),
                 '&nbsp;&rsaquo;&nbsp;'.join('<li itemprop="itemListElement" itemscope itemtype="https://schema.org/ListItem"><a itemprop="item" href="%s"><span itemprop="name">%s</span></a><meta itemprop="position" content="%d"></li>'
                                             % (u, t, i + 1) for i, (t, u) in enumerate(crumbs))))
        ld = {'@context': 'https://schema.org', '@type': 'BreadcrumbList', 'itemListElement': [
            {'@type': 'ListItem', 'position': i + 1, 'name': htmlmod.unescape(t), 'item': 'https://%s%s' % (doc.get('host', ''), u)}
            for i, (t, u) in enumerate(crumbs)]}
        head = (kit.core_head + '<meta property="og:url" content="%s">\n<meta name="page-id" content="%s">\n' % (esc(url), esc(doc['id']))
                + '<script type="application/ld+json">%s</script>\n' % jsdump(ld))
        core, core_n = comp(head=head, top=kit.top_pre + kit.nav + bc + kit.top_post, open_=kit.open_, close=kit.close_, tail=kit.core_tail)

        # per-page state blob
        state = {'page': {'id': doc['id'], 'type': r.choice(['article', 'post', 'doc', 'item']), 'section': sec_slug, 'lang': lang,
                          'ab': r.choice(['a', 'b', 'c'])},
                 'user': {'loggedIn': False, 'region': r.choice(['us', 'eu', 'cn', 'sg'])},
                 'related': [{'id': r.randint(10 ** 6, 10 ** 9), 't': kit.lang.teaser(r), 'u': '/%s/%s.html' % (sec_slug, slug(r))}
                             for _ in range(r.randint(5, 25))]}
        state_c = comp(tail='\n<script>window.__INITIAL_STATE__=%s;</script>' % jsdump(state))

        # target size
        extra_head = 13 if create_head else 0          # '<head>' + '</head>'
        lo = max(self.min_b, s0 + extra_head + core_n + PAD_MIN + 1024)
        u = r.random()
        target = self.max_b if lo >= self.max_b else int(lo * (self.max_b / lo) ** u)

        chosen = []
        cur = s0 + extra_head

        def take(c):
            nonlocal cur
            if cur + c[1] + PAD_MIN <= target:
                chosen.append(c[0])
                cur += c[1]
                return True
            return False

        take((core, core_n))
        take(state_c)
        counts = {}
        firsts = [p for p in kit.pool if p[0] == 'related']
        seconds = [p for p in kit.pool if p[0] == 'popular']
        for kind, c in (r.choice(firsts), r.choice(seconds)):
            if take(c):
                counts[kind] = counts.get(kind, 0) + 1
        for c in kit.big:
            take(c)
        order = list(range(len(kit.pool)))
        r.shuffle(order)
        for i in order:
            if target - cur < 1024:
                break
            kind, c = kit.pool[i]
            if counts.get(kind, 0) >= POOL_CAPS[kind]:
                continue
            if take(c):
                counts[kind] = counts.get(kind, 0) + 1
        # exact pad
        need = target - cur
        if chosen and need >= PAD_MIN:
            pre = '\n<script type="application/json" id="__exp">{"v":2,"exp":['
            post = '],"nonce":"%s"}</script>'
            size = len((pre + post).encode('utf-8')) - 2
            items = []
            while True:
                it = '{"id":"exp-%d","arm":"%s","w":%d}' % (r.randint(100, 99999), r.choice('abcd'), r.randint(1, 100))
                add = len(it) + (1 if items else 0)
                if size + add > need - 24:
                    break
                items.append(it)
                size += add
            pad = pre + ','.join(items) + post % hexs(r, need - size)
            chosen.append(('', '', '', '', '', pad))
            cur += len(pad.encode('utf-8'))
        if not chosen:
            return h, False, lang
        slots = [''.join(c[k] for c in chosen) for k in range(NSLOT)]
        head_ins = ('<head>' + slots[0] + '</head>') if create_head else slots[0]
        out = (h[:head_at] + head_ins + h[head_at:top_at] + slots[1] + h[top_at:bottom_at]
               + slots[2] + slots[3] + slots[4] + slots[5] + h[bottom_at:])
        return out, True, lang


def open_text(path, mode):
    if path.endswith('.gz'):
        return gzip.open(path, mode + 't', encoding='utf-8', compresslevel=6) if mode == 'w' else gzip.open(path, 'rt', encoding='utf-8')
    return open(path, mode, encoding='utf-8')


def pct(sorted_vals, q):
    if not sorted_vals:
        return 0
    return sorted_vals[min(len(sorted_vals) - 1, int(round(q * (len(sorted_vals) - 1))))]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('inp', metavar='IN')
    ap.add_argument('out', metavar='OUT')
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--min-kb', type=float, default=50)
    ap.add_argument('--max-kb', type=float, default=150)
    a = ap.parse_args(argv)
    if not 0 < a.min_kb <= a.max_kb:
        ap.error('need 0 < --min-kb <= --max-kb')
    inf = Inflater(a.seed, int(a.min_kb * KB), int(a.max_kb * KB))
    t0 = time.time()
    n = in_bytes = out_bytes = unchanged = 0
    in_sizes, out_sizes, langs = [], [], {}
    with open_text(a.inp, 'r') as fi, open_text(a.out, 'w') as fo:
        for line in fi:
            if not line.strip():
                continue
            d = json.loads(line)
            s_in = len(d['html'].encode('utf-8'))
            d['html'], changed, lang = inf.page(d)
            s_out = len(d['html'].encode('utf-8'))
            fo.write(json.dumps(d, ensure_ascii=False) + '\n')
            n += 1
            in_bytes += s_in
            out_bytes += s_out
            in_sizes.append(s_in)
            out_sizes.append(s_out)
            langs[lang] = langs.get(lang, 0) + 1
            unchanged += not changed
            if n % 2000 == 0:
                print('  %d pages, %.0f s' % (n, time.time() - t0), file=sys.stderr, flush=True)
    in_sizes.sort()
    out_sizes.sort()
    print('inflate: %d pages (%s), %.1f s, seed %d, bounds %g-%g KB'
          % (n, ', '.join('%s %d' % kv for kv in sorted(langs.items())), time.time() - t0, a.seed, a.min_kb, a.max_kb))
    print('  input : %.1f MB HTML (%.1f MB file); page KB median %.1f, p10 %.1f, p90 %.1f, max %.1f'
          % (in_bytes / 1e6, os.path.getsize(a.inp) / 1e6, pct(in_sizes, .5) / KB, pct(in_sizes, .1) / KB, pct(in_sizes, .9) / KB,
             (in_sizes[-1] if in_sizes else 0) / KB))
    print('  output: %.1f MB HTML (%.1f MB file); page KB median %.1f, p10 %.1f, p90 %.1f, min %.1f, max %.1f'
          % (out_bytes / 1e6, os.path.getsize(a.out) / 1e6, pct(out_sizes, .5) / KB, pct(out_sizes, .1) / KB, pct(out_sizes, .9) / KB,
             (out_sizes[0] if out_sizes else 0) / KB, (out_sizes[-1] if out_sizes else 0) / KB))
    if unchanged:
        print('  %d pages copied unchanged (original too close to or over --max-kb)' % unchanged)


if __name__ == '__main__':
    main()
